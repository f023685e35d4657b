// What every recompute statement shares: which values count (finite ones), the type their arithmetic
// is done in, and how a filled working table gets its key.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'

export const FINITE = (column: RawBuilder<unknown>) =>
  sql`${column} is not null and ${column} <> 'NaN'::float8 and ${column} <> 'Infinity'::float8 and ${column} <> '-Infinity'::float8`

/**
 * PostgreSQL raises an error when float8 arithmetic overflows (a sum of two values near 1e308, a
 * ratio over a denominator near 1e-308), and one such value would fail the whole recompute. Values
 * within ±[1e-100, 1e100] (or 0) cannot get there through these sums, means and ratios, so they are
 * computed in float8; when a campaign holds any value outside that range, its arithmetic is done in
 * numeric (no overflow) and a result that float8 cannot hold is dropped like any non-finite value.
 */
export interface Arithmetic {
  /** The type to compute in. */
  type: RawBuilder<unknown>
  /** A computed expression back to float8, or null when float8 cannot hold it. */
  float8: (expression: RawBuilder<unknown>) => RawBuilder<unknown>
}
export const FLOAT8: Arithmetic = { type: sql`float8`, float8: (e) => e }
export const NUMERIC: Arithmetic = {
  type: sql`numeric`,
  float8: (e) => sql`case when abs(${e}) <= 1.7976931348623157e308 and (${e} = 0 or abs(${e}) >= 2.2250738585072014e-308) then (${e})::float8 end`,
}
/** Raw values that keep float8 arithmetic away from overflow (see Arithmetic). */
export const SAFE_RANGE = sql`value = 0 or abs(value) between 1e-100 and 1e100`

/**
 * Keyed by (location, indicator), so every lookup can be an index probe whatever the planner
 * estimates. The key is added once a table is filled: one sorted index build instead of an index
 * insertion per row (bench/README.md, "Ingestion").
 */
export async function keyed(db: Kysely<DB>, name: string) {
  await sql.raw(`alter table ${name} add primary key (location_id, indicator_id)`).execute(db)
  await sql.raw(`analyze ${name}`).execute(db)
}

/** An empty working table of (location, indicator, value), dropped at commit in any case. */
export async function workingTable(db: Kysely<DB>, name: string, extra = '') {
  await sql.raw(`drop table if exists ${name}`).execute(db)
  await sql
    .raw(`create temp table ${name} (location_id integer not null, indicator_id integer not null, value double precision not null${extra}) on commit drop`)
    .execute(db)
}
