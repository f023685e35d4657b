import { AuthUser } from '../schemas/auth_user.js'
import { defineResource } from '../lib/api/resource.js'
import { validationError } from '../lib/core/errors.js'
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN, PasswordRefused } from '../lib/data/passwords.js'

const notYourself = () => validationError('id', 'you cannot delete or deactivate yourself')

/** A new password, stored as its scrypt hash (its sessions end: sql/013); null: no password sign-in. */
async function passwordColumns(value: unknown) {
  if (value === null) return { password_hash: null }
  if (typeof value !== 'string') throw validationError('password', 'must be a string')
  try {
    return { password_hash: await hashPassword(value) }
  } catch (error) {
    if (error instanceof PasswordRefused) throw validationError('password', error.message)
    throw error
  }
}

export default defineResource({
  name: 'user',
  schema: AuthUser,
  query_fields: ['id', 'username', 'email', 'first_name', 'last_name', 'is_active', 'is_staff', 'is_superuser', 'date_joined', 'last_login'],
  detail_fields: ['id', 'username', 'email', 'first_name', 'last_name', 'is_active', 'is_staff', 'is_superuser', 'date_joined', 'last_login'],
  required_fields_for_post: ['username'],
  write_only: {
    password: {
      schema: {
        type: 'string',
        nullable: true,
        minLength: PASSWORD_MIN,
        maxLength: PASSWORD_MAX,
        description: 'sets the password people sign in with (POST /api/v1/session/); never shown; null: no password',
      },
      columns: passwordColumns,
    },
  },
  writers: 'superusers',
  hooks: {
    async beforeWrite(ctx, values, existing) {
      if (existing && existing.id === ctx.user.id && values.is_active === false) throw notYourself()
    },
    async beforeDelete(ctx, row) {
      if (row.id === ctx.user.id) throw notYourself()
    },
  },
})
