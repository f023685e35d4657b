// A value marked for follow-up (sql/035): POST {datapoint_id, comment} marks it, PATCH
// {resolution_comment} resolves it; both stay, with who and when. Any user who may write the value
// marks and resolves it (a restricted user inside her subtree); the open ones of a campaign are
// `?campaign_id=…&resolved_at__isnull=true`.
import { sql } from 'kysely'
import { DatapointFollowup } from '../schemas/datapoint_followup.js'
import { defineResource } from '../lib/api/resource.js'
import { ApiError, validationError } from '../lib/core/errors.js'
import { assertLocationPermitted } from '../lib/datapoints/location-selection.js'

export default defineResource({
  name: 'datapoint_followup',
  schema: DatapointFollowup,
  // Following up data is reviewing it: every user who may enter a value may ask for it to be checked.
  writers: 'users',
  writable: ['datapoint_id', 'comment', 'resolution_comment'],
  required_fields_for_post: ['datapoint_id', 'comment'],
  location_column: 'location_id',
  ordering: ['id', 'created_at', 'resolved_at'],
  description: 'Values marked for follow-up with a comment, and resolved with another: who, when, and the value as it was marked.',
  hooks: {
    async beforeWrite(ctx, values, existing) {
      if (existing) {
        if (existing.resolved_at != null) throw new ApiError(409, 'ALREADY_RESOLVED', `Follow-up ${existing.id} is already resolved`)
        if (values.datapoint_id !== undefined && values.datapoint_id !== existing.datapoint_id) throw validationError('datapoint_id', 'cannot be changed')
        if (values.comment !== undefined && values.comment !== existing.comment)
          throw validationError('comment', 'cannot be changed: the mark stays as it was made')
        if (typeof values.resolution_comment !== 'string' || !values.resolution_comment.trim()) {
          throw validationError('resolution_comment', 'says how the follow-up was resolved (required to resolve it)')
        }
        return { resolution_comment: values.resolution_comment.trim(), resolved_by_id: ctx.user.id, resolved_at: sql`now()` }
      }
      if (values.resolution_comment != null) throw validationError('resolution_comment', 'is given when resolving a follow-up, not when marking one')
      if (typeof values.comment !== 'string' || !values.comment.trim()) throw validationError('comment', 'says what to check (required)')
      const value = await ctx.db
        .selectFrom('datapoint')
        .select(['id', 'unique_index', 'location_id', 'indicator_id', 'campaign_id', 'data_date', 'value'])
        .where('id', '=', values.datapoint_id as number)
        .executeTakeFirst()
      if (!value) throw validationError('datapoint_id', `names no value (${values.datapoint_id})`)
      await assertLocationPermitted(ctx, value.location_id)
      const open = await ctx.db
        .selectFrom('datapoint_followup')
        .select('id')
        .where('unique_index', '=', value.unique_index)
        .where('resolved_at', 'is', null)
        .executeTakeFirst()
      if (open) throw new ApiError(409, 'ALREADY_FOLLOWED_UP', `Value ${value.id} already has an open follow-up (${open.id})`, { followup_id: open.id })
      const { id, ...key } = value
      return { ...key, datapoint_id: id, comment: values.comment.trim(), created_by_id: ctx.user.id }
    },
  },
})
