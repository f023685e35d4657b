// Resource parameters (resource-api §4 `params`): each checked for its declared type before anything
// runs, and read as integers, id lists and dates.
import { invalidValue } from '../core/errors.js'
import type { Context, Resource } from './resource.js'
import type { QueryParams } from './query-params.js'
import { isInt32, parseDate, parseInteger } from '../core/values.js'

/**
 * 400 INVALID_VALUE for a declared integer, integer list or date parameter that is not one, whatever
 * else the request holds: a parameter a read happens not to use (`location_depth` without
 * `location_id`) is still the client's mistake. An empty value means "not given".
 */
export function checkParams(resource: Resource, query: QueryParams): void {
  for (const [name, spec] of Object.entries(resource.params)) {
    for (const text of query.all(name)) {
      if (text === '') continue
      if (spec.type === 'integer' && parseInteger(text) === undefined) throw invalidValue(name, text, 'integer')
      if (spec.type === 'date' && parseDate(text) === undefined) throw invalidValue(name, text, 'date YYYY-MM-DD')
      if (spec.type === 'integer_list') {
        for (const item of text.split(',')) {
          if (item.trim() !== '' && parseInteger(item.trim()) === undefined) throw invalidValue(name, item.trim(), 'comma-separated integers')
        }
      }
    }
  }
}

const BOOLEANS: Record<string, boolean> = { 1: true, true: true, 0: false, false: false }

/** The last value of `name` as a strict boolean (1/true, 0/false; 400 INVALID_VALUE otherwise); false when absent or empty. */
export function strictBoolean(ctx: Context, name: string): boolean {
  const text = ctx.query.last(name)
  if (text === undefined || text === '') return false
  if (!(text in BOOLEANS)) throw invalidValue(name, text, '1, 0, true or false')
  return BOOLEANS[text]
}

/** The last value of `name` as an integer (400 INVALID_VALUE otherwise); undefined when absent. */
export function integerParam(ctx: Context, name: string): number | undefined {
  const text = ctx.query.last(name)
  if (text === undefined) return undefined
  const n = parseInteger(text)
  if (n === undefined) throw invalidValue(name, text, 'integer')
  return n
}

/** Comma lists of integers, repeats concatenated; values outside int32 cannot match and are dropped. */
export function integerList(ctx: Context, name: string): number[] {
  return ctx.query
    .list(name)
    .map((text) => {
      const n = parseInteger(text)
      if (n === undefined) throw invalidValue(name, text, 'comma-separated integers')
      return n
    })
    .filter(isInt32)
}
