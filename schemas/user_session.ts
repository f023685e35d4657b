import { col, table } from './columns.js'

/** A signed-in person's session (sql/013): only sha256 of the cookie's token is stored. */
export const UserSession = table('user_session', {
  id: col.id(),
  user_id: col.fk('auth_user', { onDelete: 'cascade' }),
  token_hash: col.string({ maxLength: 64, unique: true, secret: true }),
  created_at: col.createdAt(),
  last_seen_at: col.datetime({ default: 'now()' }),
  expires_at: col.datetime(),
})
