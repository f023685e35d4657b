// Resource parameters that hold integers (ids, depths, id lists).
import { invalidValue } from '../core/errors.js'
import type { Context } from './resource.js'
import { isInt32, parseInteger } from '../core/values.js'

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
  return ctx.query.list(name).map((text) => {
    const n = parseInteger(text)
    if (n === undefined) throw invalidValue(name, text, 'comma-separated integers')
    return n
  }).filter(isInt32)
}
