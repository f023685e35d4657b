// A resource's own query parameters (resource-api §4 `params`), each declared once as a TypeBox schema:
// the declaration is the route's querystring schema (Fastify runs its validator before the handler),
// the handler's typed object, the OpenAPI parameter and the /schema entry. The wire keeps the original
// client's rules, applied in one coercion step: an empty value means "not given", lists are comma
// separated and repeated names concatenate, a single value given twice must agree. The reserved list
// parameters every list takes (LIST_PARAMS) are declared here too, read by lib/api/list-params.ts.
import { Type, type Static, type TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { ApiError, badRequest, invalidValue } from '../core/errors.js'
import { isInt32, parseBoolean, parseDate, parseFloatStrict, parseInteger } from '../core/values.js'
import type { QueryParams } from './query-params.js'

/** How a parameter is written on the wire, and read from it. */
export type QueryKind = 'integer' | 'integer_list' | 'number' | 'number_list' | 'string' | 'boolean' | 'flag' | 'date' | 'ignored'

const KIND = 'x-query'
const REQUIRED = 'x-required'
const ALIAS = 'x-alias'

/** A parameter declared `required`: the list cannot do without it. */
type RequiredParam = { readonly [REQUIRED]: true }

/** Options of a parameter. */
export interface ParamOptions {
  /**
   * The list cannot do without it: absent (or empty), the request is 400 `MISSING_REQUIRED_PARAMETER`
   * before any other check of its parameters, so the hooks get it typed as always there.
   */
  required?: boolean
  /** Another name it is also read under (an older spelling): values given under either are its values. */
  alias?: string
}

/** The declared parameters of a resource (or of one of its read modes), by name. */
export type QuerySchema = Record<string, TSchema>

/** The names of the required parameters of `S`. */
type RequiredName<S extends QuerySchema> = { [K in keyof S]: S[K] extends RequiredParam ? K : never }[keyof S]

/** The object a handler gets for `declared`: each parameter typed, optional unless required. */
export type QueryOf<S extends QuerySchema> = { [K in keyof S as K extends RequiredName<S> ? never : K]?: Static<S[K]> } & {
  [K in RequiredName<S>]: Static<S[K]>
}

/** The sets of `S` as one object type. */
export type JoinedParams<S extends QuerySchema[]> = S extends [infer First extends QuerySchema, ...infer Rest extends QuerySchema[]]
  ? First & JoinedParams<Rest>
  : unknown

/**
 * Parameter sets as one, each name declared once: a name in two sets (a resource's and one of its
 * modes', or two shared sets, an alias among them) would have one declaration silently replace the
 * other, so it is refused when the declarations load, at start. Sets are joined with this, never spread.
 */
export function joinParams<S extends QuerySchema[]>(...sets: S): JoinedParams<S> {
  const joined: QuerySchema = {}
  const used = new Set<string>()
  for (const set of sets) {
    for (const [name, schema] of Object.entries(set)) {
      joined[name] = schema
      for (const spelling of namesOf({ [name]: schema }).keys()) {
        if (used.has(spelling)) throw new Error(`query parameter ${spelling} is declared twice`)
        used.add(spelling)
      }
    }
  }
  return joined as JoinedParams<S>
}

type Marked<T extends TSchema, O extends ParamOptions> = O extends { required: true } ? T & RequiredParam : T

const param = <T extends TSchema, const O extends ParamOptions>(schema: T, kind: QueryKind, options?: O): Marked<T, O> =>
  Object.assign(schema, { [KIND]: kind }, options?.required ? { [REQUIRED]: true } : {}, options?.alias ? { [ALIAS]: options.alias } : {}) as Marked<T, O>

/**
 * The parameter constructors: each is a TypeBox schema of the typed value, tagged with its wire form;
 * `{ required: true }` (ParamOptions) when the list cannot do without it, `{ alias }` for a second name.
 */
export const Param = {
  integer: <const O extends ParamOptions>(help: string, options?: O) => param(Type.Integer({ description: help }), 'integer', options),
  /** Comma-separated integers; values outside int32 cannot match a row and are dropped. */
  integers: <const O extends ParamOptions>(help: string, options?: O) => param(Type.Array(Type.Integer(), { description: help }), 'integer_list', options),
  number: <const O extends ParamOptions>(help: string, options?: O) => param(Type.Number({ description: help }), 'number', options),
  numbers: <const O extends ParamOptions>(help: string, options?: O) => param(Type.Array(Type.Number(), { description: help }), 'number_list', options),
  string: <const O extends ParamOptions>(help: string, options?: O) => param(Type.String({ description: help }), 'string', options),
  /** 1, 0, true or false. */
  boolean: <const O extends ParamOptions>(help: string, options?: O) => param(Type.Boolean({ description: help }), 'boolean', options),
  /** Any value but "", 0 or false means true (the original client's `show_leaf`). */
  flag: (help: string) => param(Type.Boolean({ description: help }), 'flag'),
  /** YYYY-MM-DD, read as that date (single-digit months and days accepted). */
  date: <const O extends ParamOptions>(help: string, options?: O) => param(Type.String({ format: 'date', description: help }), 'date', options),
  /** Accepted and ignored (front-end compatibility): any values, never read. */
  ignored: () => param(Type.String({ description: 'accepted and ignored (front-end compatibility)' }), 'ignored'),
}

export const kindOf = (schema: TSchema): QueryKind => (schema as unknown as Record<string, QueryKind>)[KIND]
export const isRequired = (schema: TSchema): boolean => (schema as unknown as Record<string, unknown>)[REQUIRED] === true
export const aliasOf = (schema: TSchema): string | undefined => (schema as unknown as Record<string, string | undefined>)[ALIAS]

/** Each name the parameters of `declared` are read under, their own and their aliases, to the parameter's own. */
export function namesOf(declared: QuerySchema): Map<string, string> {
  const names = new Map<string, string>()
  for (const [name, schema] of Object.entries(declared)) {
    names.set(name, name)
    const alias = aliasOf(schema)
    if (alias !== undefined) names.set(alias, name)
  }
  return names
}
export const helpOf = (schema: TSchema): string => (schema as { description?: string }).description ?? ''

/** A page's size when `limit` is not given, and the largest (also a CSV export's without a limit). */
export const DEFAULT_LIMIT = 1000
export const MAX_LIMIT = 100_000

/**
 * The reserved list parameters (resource-api §9), which every list takes besides its own, each the
 * TypeBox schema of its wire form: lib/api/list-params.ts reads them, the OpenAPI document shows them.
 */
export const LIST_PARAMS = {
  limit: Type.Integer({ minimum: 0, description: `page size (default ${DEFAULT_LIMIT}, 0 = max ${MAX_LIMIT})` }),
  offset: Type.Integer({ minimum: 0, description: 'rows to skip' }),
  order_by: Type.String({ description: 'field or -field, comma-separated' }),
  fields: Type.String({ description: 'comma-separated projection' }),
  format: Type.Enum(['json', 'csv'], { type: 'string' }),
  shape: Type.Enum(['long', 'wide'], { type: 'string', description: 'with format=csv: long (default) or wide (one column per indicator)' }),
}

/** Names a list request never takes as a filter: the list parameters, and a DELETE's `cascade`. */
export const RESERVED: readonly string[] = [...Object.keys(LIST_PARAMS), 'cascade']

/** The wire form of each kind, for the OpenAPI document. */
export const WIRE_SCHEMA: Record<QueryKind, Record<string, unknown>> = {
  integer: { type: 'integer' },
  integer_list: { type: 'string', pattern: '^\\s*-?\\d*(\\s*,\\s*-?\\d*)*\\s*$' },
  number: { type: 'number' },
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
  number: 'number',
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
    case 'number': {
      const text = single(name, values)
      return parseFloatStrict(text) ?? invalid(name, text, 'number')
    }
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
  const readAs = namesOf(declared)
  return (raw) => {
    // One pass over the query: each declared parameter's non-empty values (under its name or its
    // alias), which names were given, and how the client spelled each (the 400 names what it wrote).
    const values = new Map<string, string[]>()
    const given = new Set<string>()
    const spelled = new Map<string, string>()
    for (const [written, value] of raw.entries) {
      if (value === '') continue
      const name = readAs.get(written) ?? written
      given.add(name)
      const kind = kinds.get(name)
      if (kind === undefined || kind === 'ignored') continue
      if (name !== written) spelled.set(name, written)
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
        if (list) typed[name] = coerce(spelled.get(name) ?? name, kinds.get(name)!, list)
      }
    }
    // The coercion step's result is the declared type, whatever a future kind does.
    if (!check.Check(typed)) throw new Error(`query coercion produced no ${JSON.stringify(names)} object`)
    return typed as QueryOf<S>
  }
}
