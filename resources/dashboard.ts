import { CustomDashboard } from '../schemas/custom_dashboard.js'
import { defineResource, type Row } from '../lib/api/resource.js'

export default defineResource({
  name: 'dashboard',
  aliases: ['custom_dashboard'],
  schema: CustomDashboard,
  writers: 'users',
  owner_column: 'owner_id',
  filtering: ['id', 'title', 'description', 'layout', 'owner_id'],
  required_fields_for_post: ['title'],
  hooks: {
    // Detail only: chart uuids in rows[*].charts become the charts themselves (resource-api §21).
    async detail(ctx, dashboard) {
      const rows = dashboard.rows
      if (!Array.isArray(rows)) return dashboard
      const uuids = rows.flatMap((r) => (Array.isArray(r?.charts) ? r.charts.filter((c: unknown) => typeof c === 'string') : []))
      if (!uuids.length) return dashboard
      const charts = await ctx.db.selectFrom('custom_chart').select(['id', 'uuid', 'title', 'chart_json']).where('uuid', 'in', uuids).execute()
      const byUuid = new Map(charts.map((c) => [c.uuid, c]))
      const expanded = rows.map((r: Row) =>
        Array.isArray(r?.charts) ? { ...r, charts: r.charts.map((c: unknown) => (typeof c === 'string' && byUuid.get(c)) || c) } : r,
      )
      return { ...dashboard, rows: expanded }
    },
  },
})
