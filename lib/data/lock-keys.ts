// Advisory locks belong to the whole PostgreSQL database, not to a schema: two deployments in two
// schemas of one database (or two test processes, a schema each) would wait on each other's campaign,
// document and job locks, and time out. Every key the app takes is made of its schema's name, what is
// locked and an id: the high 32 bits hash the schema and the kind, the low 32 bits are the id.
import { type RawBuilder, sql } from 'kysely'

/** The advisory lock key of `kind`'s `id` (a 32-bit integer, or an SQL expression of one) in the current schema. */
export function lockKey(kind: string, id: number | RawBuilder<unknown> = 0): RawBuilder<string> {
  const low = typeof id === 'number' ? sql.lit(Math.trunc(id)) : id
  return sql<string>`((hashtext(coalesce(current_schema(), '') || ${sql.lit(`/${kind}`)})::bigint << 32) | (${low}::bigint & 4294967295))`
}
