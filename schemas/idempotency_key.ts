import { col, table } from './columns.js'

/** The first answer of a write sent with an Idempotency-Key (sql/025), its user's own until it expires. */
export const IdempotencyKey = table(
  'idempotency_key',
  {
    id: col.id(),
    user_id: col.fk('auth_user', { onDelete: 'cascade' }),
    key: col.string(),
    fingerprint: col.string({ maxLength: 64 }),
    status: col.integer(),
    headers: col.json(),
    answer: col.string(),
    created_at: col.createdAt(),
    expires_at: col.datetime(),
  },
  { unique: [['user_id', 'key']] },
)
