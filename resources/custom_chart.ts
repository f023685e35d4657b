import { CustomChart } from '../schemas/custom_chart.js'
import { defineResource } from '../lib/api/resource.js'

export default defineResource({
  name: 'custom_chart',
  schema: CustomChart,
  writers: 'users',
  owner_column: 'owner_id',
  filtering: ['id', 'uuid', 'title', 'owner_id'],
  required_fields_for_post: ['chart_json', 'title', 'uuid'],
  hooks: {
    // A deleted chart disappears from every dashboard's rows[*].charts (D14), named by uuid or by id, in the same transaction.
    async afterDelete(ctx, rows) {
      const gone = new Set<unknown>(rows.flatMap((r) => [r.uuid, r.id]))
      const dashboards = await ctx.db.selectFrom('custom_dashboard').select(['id', 'rows']).where('rows', 'is not', null).execute()
      for (const dashboard of dashboards) {
        if (!Array.isArray(dashboard.rows)) continue
        let changed = false
        const rowsAfter = dashboard.rows.map((row: unknown) => {
          const charts = (row as { charts?: unknown })?.charts
          if (!Array.isArray(charts) || !charts.some((c) => gone.has(c))) return row
          changed = true
          return { ...(row as object), charts: charts.filter((c) => !gone.has(c)) }
        })
        if (changed) {
          await ctx.db
            .updateTable('custom_dashboard')
            .set({ rows: JSON.stringify(rowsAfter) })
            .where('id', '=', dashboard.id)
            .execute()
        }
      }
    },
  },
})
