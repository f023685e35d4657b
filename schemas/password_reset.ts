import { col, table } from './columns.js'

/** A one-time password reset link an administrator issued (sql/016): only sha256 of its token is stored. */
export const PasswordReset = table('password_reset', {
  id: col.id(),
  user_id: col.fk('auth_user', { onDelete: 'cascade' }),
  token_hash: col.string({ maxLength: 64, unique: true, secret: true }),
  created_by_id: col.fk('auth_user', { nullable: true, onDelete: 'set null' }),
  created_at: col.createdAt(),
  expires_at: col.datetime(),
})
