// A resource's own query parameters (resource-api §4 `params`), each declared once as a TypeBox schema:
// the declaration is the route's querystring schema (Fastify runs its validator before the handler),
// the handler's typed object, the OpenAPI parameter and the /schema entry. The wire keeps the original
// client's rules, applied in one coercion step: an empty value means "not given", lists are comma
// separated and repeated names concatenate, a single value given twice must agree.
import { Type, type Static, type TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { ApiError, badRequest, invalidValue } from '../core/errors.js'
import { isInt32, parseBoolean, parseDate, parseFloatStrict, parseInteger } from '../core/values.js'
import type { QueryParams } from './query-params.js'

/** How a parameter is written on the wire, and read from it. */
export type QueryKind = 'integer' | 'integer_list' | 'number_list' | 'string' | 'boolean' | 'flag' | 'date' | 'ignored'

const KIND = 'x-query'

/** The declared parameters of a resource (or of one of its read modes), by name. */
export type QuerySchema = Record<string, TSchema>

/** The object a handler gets for `declared`: every parameter optional, typed. */
export type QueryOf<S extends QuerySchema> = { [K in keyof S]?: Static<S[K]> }

const param = <T extends TSchema>(schema: T, kind: QueryKind): T => Object.assign(schema, { [KIND]: kind })

/** The parameter constructors: each is a TypeBox schema of the typed value, tagged with its wire form. */
export const Param = {
  integer: (help: string) => param(Type.Integer({ description: help }), 'integer'),
  /** Comma-separated integers; values outside int32 cannot match a row and are dropped. */
  integers: (help: string) => param(Type.Array(Type.Integer(), { description: help }), 'integer_list'),
  numbers: (help: string) => param(Type.Array(Type.Number(), { description: help }), 'number_list'),
  string: (help: string) => param(Type.String({ description: help }), 'string'),
  /** 1, 0, true or false. */
  boolean: (help: string) => param(Type.Boolean({ description: help }), 'boolean'),
  /** Any value but "", 0 or false means true (the original client's `show_leaf`). */
  flag: (help: string) => param(Type.Boolean({ description: help }), 'flag'),
  /** YYYY-MM-DD, read as that date (single-digit months and days accepted). */
  date: (help: string) => param(Type.String({ format: 'date', description: help }), 'date'),
  /** Accepted and ignored (front-end compatibility): any values, never read. */
  ignored: () => param(Type.String({ description: 'accepted and ignored (front-end compatibility)' }), 'ignored'),
}

export const kindOf = (schema: TSchema): QueryKind => (schema as unknown as Record<string, QueryKind>)[KIND]
export const helpOf = (schema: TSchema): string => (schema as { description?: string }).description ?? ''

/** The wire form of each kind, for the OpenAPI document. */
export const WIRE_SCHEMA: Record<QueryKind, Record<string, unknown>> = {
  integer: { type: 'integer' },
  integer_list: { type: 'string', pattern: '^\\s*-?\\d*(\\s*,\\s*-?\\d*)*\\s*$' },
  number_list: { type: 'string' },
  string: { type: 'string' },
  boolean: { type: 'string', enum: ['1', '0', 'true', 'false'] },
  flag: { type: 'string' },
  date: { type: 'string', pattern: '^\\d{4}-\\d{1,2}-\\d{1,2}$' },
  ignored: { type: 'string' },
}

/** The type /schema names for each kind (the original's words: a list of numbers is a string there). */
export const SCHEMA_DOC_TYPE: Record<QueryKind, string> = {
  integer: 'integer',
  integer_list: 'integer_list',
  number_list: 'string',
  string: 'string',
  boolean: 'boolean',
  flag: 'boolean',
  date: 'date',
  ignored: 'string',
}

const FLAG_FALSE = new Set(['', '0', 'false', 'False'])

/** One value of a single-valued parameter: repeating it is harmless, two different values are refused. */
function single(name: string, values: string[]): string {
  if (values.some((v) => v !== values[0])) {
    throw badRequest('DUPLICATE_PARAMETER', `Parameter ${name} is given more than once with different values`)
  }
  return values[0]
}

/** The comma lists of `values` as one list, items trimmed, empty items dropped. */
function items(values: string[]): string[] {
  const all: string[] = []
  for (const value of values) {
    for (const item of value.split(',')) {
      const trimmed = item.trim()
      if (trimmed !== '') all.push(trimmed)
    }
  }
  return all
}

/** The typed value of parameter `name` of `kind` from its non-empty raw values (400 INVALID_VALUE naming it). */
function coerce(name: string, kind: QueryKind, values: string[]): unknown {
  switch (kind) {
    case 'integer_list':
      return items(values)
        .map((text) => parseInteger(text) ?? invalid(name, text, 'comma-separated integers'))
        .filter(isInt32)
    case 'number_list':
      return items(values).map((text) => parseFloatStrict(text) ?? invalid(name, text, 'comma-separated numbers'))
    case 'integer': {
      const text = single(name, values)
      return parseInteger(text) ?? invalid(name, text, 'integer')
    }
    case 'date': {
      const text = single(name, values)
      return parseDate(text) ?? invalid(name, text, 'date YYYY-MM-DD')
    }
    case 'boolean': {
      const text = single(name, values)
      return parseBoolean(text) ?? invalid(name, text, '1, 0, true or false')
    }
    case 'flag':
      return !FLAG_FALSE.has(single(name, values))
    case 'string':
      return single(name, values)
  }
}

function invalid(name: string, text: string, expected: string): never {
  throw invalidValue(name, text, expected)
}

/** What the list read requires: these parameters, unless the resource allows a lookup by id instead. */
export interface Required {
  names: string[]
  unlessId: boolean
}

/**
 * The reader of a resource's declared parameters, compiled once: the raw query in, the typed object out,
 * or the 400 a client's mistake gets (a missing required parameter first, then each parameter in
 * declaration order). A parameter a read happens not to use (`location_depth` without `location_id`) is
 * still checked: it is the client's mistake all the same.
 */
export function queryReader<S extends QuerySchema>(declared: S, required: Required): (raw: QueryParams) => QueryOf<S> {
  const check = Compile(Type.Object(Object.fromEntries(Object.entries(declared).map(([name, schema]) => [name, Type.Optional(schema)]))))
  const names = Object.keys(declared)
  const kinds = new Map(names.map((name) => [name, kindOf(declared[name])]))
  return (raw) => {
    // One pass over the query: each declared parameter's non-empty values, and which names were given.
    const values = new Map<string, string[]>()
    const given = new Set<string>()
    for (const [name, value] of raw.entries) {
      if (value === '') continue
      given.add(name)
      const kind = kinds.get(name)
      if (kind === undefined || kind === 'ignored') continue
      const list = values.get(name)
      if (list) list.push(value)
      else values.set(name, [value])
    }
    // Empty means not given, for a required parameter too.
    const byId = required.unlessId && (raw.has('id') || raw.has('id__in'))
    const missing = byId ? [] : required.names.filter((name) => !given.has(name))
    if (missing.length) {
      throw new ApiError(400, 'MISSING_REQUIRED_PARAMETER', `Missing required parameter ${missing.join(', ')}`, { missing })
    }
    const typed: Record<string, unknown> = {}
    if (values.size) {
      for (const name of names) {
        const list = values.get(name)
        if (list) typed[name] = coerce(name, kinds.get(name)!, list)
      }
    }
    // The coercion step's result is the declared type, whatever a future kind does.
    if (!check.Check(typed)) throw new Error(`query coercion produced no ${JSON.stringify(names)} object`)
    return typed as QueryOf<S>
  }
}
