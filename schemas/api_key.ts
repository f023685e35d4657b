import { col, table } from './columns.js'

/** API keys: only sha256(key) is stored (resource-api §5). */
export const ApiKey = table('api_key', {
  id: col.id(),
  user_id: col.fk('auth_user', { onDelete: 'cascade' }),
  key_hash: col.string({ maxLength: 64, unique: true, secret: true }),
  created_at: col.createdAt(),
  last_used_at: col.datetime({ nullable: true, readonly: true }),
})
