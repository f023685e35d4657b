import { sql } from 'kysely'
import { DashboardShare } from '../schemas/dashboard_share.js'
import { defineResource } from '../lib/api/resource.js'
import { checkRequiredFields, coerceBody } from '../lib/api/body.js'
import { ApiError, forbidden, invalidValue } from '../lib/core/errors.js'
import { hashShareToken, newShareToken, shareTop, shareViewOf } from '../lib/data/shares.js'

// Read-only links to a dashboard (lib/data/shares.ts): its owner or a superuser makes one, within the
// part of the country they may see; the token is in the 201 answer and nowhere else. Each user lists
// and revokes (DELETE) their own links; superusers, every link. A link keeps the view it was made
// from (`view`: campaign, location, dates), which it opens at, a `label` its maker gives it, and
// `token_end`, the last 4 characters of its address, to tell links apart.
export default defineResource({
  name: 'dashboard_share',
  schema: DashboardShare,
  writers: 'users',
  owner_column: 'created_by_id',
  query_fields: ['id', 'dashboard_id', 'created_by_id', 'location_id', 'created_at', 'expires_at', 'view', 'label', 'token_end'],
  detail_fields: ['id', 'dashboard_id', 'created_by_id', 'location_id', 'created_at', 'expires_at', 'view', 'label', 'token_end'],
  filtering: ['id', 'dashboard_id', 'created_by_id'],
  required_fields_for_post: ['dashboard_id'],
  writable: ['dashboard_id', 'location_id', 'expires_at', 'view', 'label'],
  methods: { list: ['GET', 'POST'], detail: ['GET', 'DELETE'] },
  row_filter: (ctx) => sql<boolean>`t.created_by_id = ${ctx.user.id}`,
  hooks: {
    async create(ctx, body, encoding) {
      checkRequiredFields(ctx.resource, body)
      const { view: givenView, ...rest } = body
      const view = shareViewOf(givenView, (message) => new ApiError(400, 'INVALID_VALUE', message))
      const values = coerceBody(ctx.resource, rest, encoding) as {
        dashboard_id: number
        location_id?: number | null
        expires_at?: string | null
        label?: string | null
      }
      // A label of blanks is none; one longer than the column is the client's to shorten.
      const label = values.label?.trim() || null
      const dashboard = await ctx.db.selectFrom('custom_dashboard').select(['id', 'owner_id']).where('id', '=', values.dashboard_id).executeTakeFirst()
      if (!dashboard) throw invalidValue('dashboard_id', values.dashboard_id, 'the id of a dashboard')
      if (!ctx.user.is_superuser && dashboard.owner_id !== ctx.user.id)
        throw forbidden(`Dashboard ${dashboard.id} belongs to another user: only its owner or a superuser may share it`, 'OWNER_FORBIDDEN')
      const location = values.location_id ?? null
      if (location !== null) {
        const known = await ctx.db.selectFrom('location').select('id').where('id', '=', location).executeTakeFirst()
        if (!known) throw invalidValue('location_id', location, 'the id of a location')
        if ((await shareTop(ctx.db, ctx.user, location)) !== location)
          throw forbidden(`Location ${location} is outside the part of the country you may see: a link shows no more than you do`, 'LOCATION_FORBIDDEN')
      }
      if (view?.location != null) {
        const known = await ctx.db.selectFrom('location').select('id').where('id', '=', view.location).executeTakeFirst()
        if (!known) throw invalidValue('view.location', view.location, 'the id of a location')
        if ((await shareTop(ctx.db, ctx.user, view.location)) !== view.location)
          throw forbidden(`Location ${view.location} is outside the part of the country you may see: a link shows no more than you do`, 'LOCATION_FORBIDDEN')
      }
      if (view?.campaign != null && !(await ctx.db.selectFrom('campaign').select('id').where('id', '=', view.campaign).executeTakeFirst()))
        throw invalidValue('view.campaign', view.campaign, 'the id of a campaign')
      if (
        values.expires_at != null &&
        !(await sql<{ ahead: boolean }>`select ${values.expires_at}::timestamptz > now() as ahead`.execute(ctx.db)).rows[0].ahead
      )
        throw new ApiError(400, 'INVALID_VALUE', `expires_at must be in the future, not ${values.expires_at}`)
      const token = newShareToken()
      const { id } = await ctx.db
        .insertInto('dashboard_share')
        .values({
          dashboard_id: dashboard.id,
          created_by_id: ctx.user.id,
          location_id: location,
          token_hash: hashShareToken(token),
          expires_at: values.expires_at ?? null,
          view: view === null ? null : JSON.stringify(view),
          label,
          token_end: token.slice(-4),
        })
        .returning('id')
        .executeTakeFirstOrThrow()
      // The address opens at the view too, so a link pasted anywhere shows what its maker saw.
      const hash = view ? `?${new URLSearchParams(Object.entries(view).map(([k, v]) => [k, String(v)]))}` : ''
      return { id, once: { token, url: `/app/#/shared/${token}${hash}` } }
    },
  },
})
