import { sql } from 'kysely'
import { LocationPermission } from '../schemas/location_permission.js'
import { defineResource } from '../lib/api/resource.js'
import { forbidden } from '../lib/core/errors.js'

export default defineResource({
  name: 'location_responsibility',
  schema: LocationPermission,
  query_fields: ['id', 'user_id', 'top_lvl_location_id', 'top_lvl_location__name'],
  GET_params_required: ['user_id'],
  required_fields_for_post: ['user_id', 'top_lvl_location_id'],
  writers: 'superusers',
  // A user who is not a superuser reaches their own responsibility only (list and detail).
  row_filter: (ctx) => sql<boolean>`t.user_id = ${ctx.user.id}`,
  hooks: {
    async list(ctx, query) {
      // A restricted user must not learn other users' responsibilities.
      if (!ctx.user.is_superuser && ctx.query.all('user_id').some((v) => v !== String(ctx.user.id))) {
        throw forbidden('You may only read your own responsibility')
      }
      return { query }
    },
  },
})
