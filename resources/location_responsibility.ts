import { sql } from 'kysely'
import { LocationPermission } from '../schemas/location_permission.js'
import { defineResource } from '../lib/api/resource.js'
import { ApiError, forbidden } from '../lib/core/errors.js'

/**
 * A user without a responsibility is unrestricted (resource-api §6), so deleting a user's last one
 * would widen them to the whole country: refused, naming the two ways that say what is meant.
 */
const lastResponsibility = (userId: number) =>
  new ApiError(
    409,
    'LAST_RESPONSIBILITY',
    `Deleting user ${userId}'s only location responsibility would give them every location. ` +
      `To widen their access on purpose, PATCH the responsibility to the root location; to end it, deactivate the user (PATCH /api/v1/user/${userId}/ {"is_active": false})`,
    { user_id: userId },
  )

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
    // Runs for every delete of responsibilities, also those a cascade takes (a deleted location).
    async afterDelete(ctx, rows) {
      const users = [...new Set(rows.map((r) => r.user_id as number))]
      if (!users.length) return
      const widened = await ctx.db
        .selectFrom('auth_user as u')
        .select('u.id')
        .where('u.id', 'in', users)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('location_permission as lp').select('lp.id').whereRef('lp.user_id', '=', 'u.id'))))
        .orderBy('u.id')
        .executeTakeFirst()
      if (widened) throw lastResponsibility(widened.id)
    },
  },
})
