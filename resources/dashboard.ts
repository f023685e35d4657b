import type { Kysely } from 'kysely'
import { CustomDashboard } from '../schemas/custom_dashboard.js'
import type { DB } from '../schemas/index.js'
import { defineResource, type Row } from '../lib/api/resource.js'
import { validationError } from '../lib/core/errors.js'

// A dashboard names its charts in rows[*].charts (resource-api §21): by uuid, as the original front-end
// does, or by id. A uuid is only a name, which anyone may give a chart of theirs, so a uuid is drawn
// only from the charts of the dashboard's owner: a uuid that no chart held yet (or no longer) cannot be
// taken by someone else's chart and shown in this dashboard. Another owner's chart, named on purpose
// when the dashboard is saved, is kept by its id, which nobody can take.

type ChartRef = string | number

const chartRefs = (rows: unknown): ChartRef[] =>
  Array.isArray(rows)
    ? rows.flatMap((row) => (Array.isArray(row?.charts) ? row.charts.filter((c: unknown) => typeof c === 'string' || Number.isInteger(c)) : []))
    : []

/** Each row's charts mapped by `replace` (other entries of a row kept as they are). */
const mapCharts = (rows: Row[], replace: (chart: unknown) => unknown) =>
  rows.map((row) => (Array.isArray(row?.charts) ? { ...row, charts: row.charts.map(replace) } : row))

/** The charts `refs` name, as a dashboard of `ownerId` may show them: uuids of the owner's charts, ids of any. */
async function chartsNamed(db: Kysely<DB>, refs: ChartRef[], ownerId: number | null) {
  const uuids = refs.filter((r): r is string => typeof r === 'string')
  const ids = refs.filter((r): r is number => typeof r === 'number')
  const charts = await db
    .selectFrom('custom_chart')
    .select(['id', 'uuid', 'title', 'chart_json', 'owner_id'])
    .where((eb) =>
      eb.or([
        ...(ids.length ? [eb('id', 'in', ids)] : []),
        ...(uuids.length ? [eb.and([eb('uuid', 'in', uuids), ownerId === null ? eb('owner_id', 'is', null) : eb('owner_id', '=', ownerId)])] : []),
      ]),
    )
    .execute()
  return { byUuid: new Map(charts.map((c) => [c.uuid, c])), byId: new Map(charts.map((c) => [c.id, c])) }
}

export default defineResource({
  name: 'dashboard',
  aliases: ['custom_dashboard'],
  schema: CustomDashboard,
  writers: 'users',
  owner_column: 'owner_id',
  filtering: ['id', 'title', 'description', 'layout', 'owner_id'],
  required_fields_for_post: ['title'],
  hooks: {
    // Another owner's chart named by uuid is kept by its id: it exists now and was chosen on purpose.
    async beforeWrite(ctx, values, existing) {
      if (!Array.isArray(values.rows)) return
      // Each chart is drawn by every export and read by every view: the number is bounded where it is saved.
      const count = (values.rows as Row[]).reduce((sum, row) => sum + (Array.isArray(row?.charts) ? row.charts.length : 0), 0)
      const limit = ctx.config.MAX_CHARTS_PER_DASHBOARD
      if (count > limit) throw validationError('rows', `${count} charts: a dashboard holds at most ${limit} (MAX_CHARTS_PER_DASHBOARD)`)
      const ownerId = (existing ? existing.owner_id : values.owner_id) as number | null
      const uuids = chartRefs(values.rows).filter((r): r is string => typeof r === 'string')
      if (!uuids.length) return
      const foreign = await ctx.db
        .selectFrom('custom_chart')
        .select(['id', 'uuid'])
        .where('uuid', 'in', uuids)
        .where((eb) => (ownerId === null ? eb('owner_id', 'is not', null) : eb.or([eb('owner_id', 'is', null), eb('owner_id', '!=', ownerId)])))
        .execute()
      if (!foreign.length) return
      const idOf = new Map(foreign.map((c) => [c.uuid, c.id]))
      return { ...values, rows: mapCharts(values.rows, (c) => (typeof c === 'string' && idOf.get(c)) || c) }
    },
    // Detail only: the charts named in rows[*].charts become the charts themselves.
    async detail(ctx, dashboard) {
      const rows = dashboard.rows
      if (!Array.isArray(rows)) return dashboard
      const refs = chartRefs(rows)
      if (!refs.length) return dashboard
      const { byUuid, byId } = await chartsNamed(ctx.db, refs, dashboard.owner_id as number | null)
      const shown = (c: unknown) => {
        const chart = typeof c === 'string' ? byUuid.get(c) : typeof c === 'number' ? byId.get(c) : undefined
        if (!chart) return c
        const { owner_id: _owner, ...drawn } = chart
        return drawn
      }
      return { ...dashboard, rows: mapCharts(rows, shown) }
    },
  },
})
