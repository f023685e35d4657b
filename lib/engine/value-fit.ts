// Whether a value fits its indicator, at data entry and in uploads alike: a yes/no is 0 or 1, a count
// is not negative, a dated indicator takes no campaign's value, and no value is so
// large that a total over the tree would lose it (a sum of two 1e308 is Infinity, and a country's
// total vanished). docs/decisions.md, "Values fit their indicator".
import type { Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { validationError } from '../core/errors.js'

/**
 * The largest magnitude a value may have: below 2^53 (9.007e15), where every whole number is exact, and
 * far above any count a programme keeps (a sum over 100,000 locations of such values stays finite).
 */
export const MAX_MAGNITUDE = 1e15

/** What of an indicator decides which values fit it. */
export interface IndicatorKind {
  data_format: string
  resource_name: string
}

/** Why `value` does not fit an indicator of `kind`, entered as a value of `written` ('campaign' or 'date'); undefined when it fits. */
export function valueProblem(kind: IndicatorKind, value: number, written: 'campaign' | 'date'): string | undefined {
  // 'date' is a declaration; 'campaign' is every indicator's default (the original's), which says
  // nothing against dated values: only a declared dated indicator refuses a campaign's value.
  if (kind.resource_name === 'date' && written === 'campaign') return 'the indicator takes values by date, not by campaign'
  if (!Number.isFinite(value) || Math.abs(value) > MAX_MAGNITUDE) return `beyond ±${MAX_MAGNITUDE.toExponential()}: a total over the locations would lose it`
  if (kind.data_format === 'bool' && value !== 0 && value !== 1) return 'a yes/no indicator takes 0 (no) or 1 (yes)'
  if (kind.data_format === 'int' && value < 0) return 'a count is not negative'
  return undefined
}

/** The kinds of `indicators`, by id. */
export async function indicatorKinds(db: Kysely<DB>, indicators: number[]): Promise<Map<number, IndicatorKind>> {
  if (!indicators.length) return new Map()
  const rows = await db.selectFrom('indicator').select(['id', 'data_format', 'resource_name']).where('id', 'in', indicators).execute()
  return new Map(rows.map((r) => [r.id, { data_format: r.data_format, resource_name: r.resource_name }]))
}

/** A 400 naming why a value entered for `indicatorId` does not fit it (an unknown indicator is the write's own 400). */
export async function assertValueFits(db: Kysely<DB>, indicatorId: number, value: number, written: 'campaign' | 'date'): Promise<void> {
  const kind = (await indicatorKinds(db, [indicatorId])).get(indicatorId)
  const problem = kind && valueProblem(kind, value, written)
  if (problem) throw validationError('value', `${value} for indicator ${indicatorId}: ${problem}`)
}
