// The filter grammar of resource-api §8: `path[__lookup]=value`, where path is a filterable field or a
// relation path (`indicator__short_name`). Pure: (resource, parameters) -> SQL conditions with bound
// values and the joins they need. Field and table names only ever come from the schemas, never from
// the request, so a hostile key can at worst be rejected.
import { sql, type Expression, type SqlBool } from 'kysely'
import { tableSchema } from '../../schemas/index.js'
import { columnsOf, type ColumnKind } from '../../schemas/columns.js'
import { badRequest, invalidValue } from '../core/errors.js'
import { relationsOf, type FieldInfo, type Resource } from './resource.js'
import { NULL_TOKENS, isInt32, parseBoolean, parseDate, parseFloatStrict, parseInteger, parseTimestamp } from '../core/values.js'

export const LOOKUPS = [
  'exact',
  'iexact',
  'contains',
  'icontains',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'range',
  'startswith',
  'istartswith',
  'endswith',
  'iendswith',
  'isnull',
  'year',
  'month',
  'day',
] as const
export type Lookup = (typeof LOOKUPS)[number]

const NUMERIC: Lookup[] = ['exact', 'gt', 'gte', 'lt', 'lte', 'in', 'range', 'isnull']
const STRING: Lookup[] = [
  'exact',
  'iexact',
  'contains',
  'icontains',
  'startswith',
  'istartswith',
  'endswith',
  'iendswith',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'isnull',
]
const TEMPORAL: Lookup[] = ['exact', 'gt', 'gte', 'lt', 'lte', 'in', 'range', 'isnull', 'year', 'month', 'day']

export const LOOKUPS_BY_KIND: Record<ColumnKind, Lookup[]> = {
  integer: NUMERIC,
  related: NUMERIC,
  float: NUMERIC,
  string: STRING,
  boolean: ['exact', 'in', 'isnull'],
  date: TEMPORAL,
  datetime: TEMPORAL,
  json: [],
}

const isLookup = (part: string): part is Lookup => (LOOKUPS as readonly string[]).includes(part)

/**
 * Resolves `a__b__col` from the resource's table through foreign keys. Returns undefined when a part
 * is not a relation or the last part is not a column. A trailing relation name means its FK column.
 */
export function resolveRelationPath(resource: Resource, parts: string[]): FieldInfo | undefined {
  let relations = resource.relations
  let columns = resource.columns
  const path: string[] = []
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]
    const last = i === parts.length - 1
    if (last) {
      const fkName = `${part}_id`
      const name = part in columns ? part : relations[part] && fkName in columns ? fkName : undefined
      if (!name) return undefined
      return { kind: columns[name].kind, alias: path.length ? path.join('__') : 't', column: name, path, meta: columns[name] }
    }
    const relation = relations[part]
    if (!relation) return undefined
    path.push(part)
    columns = columnsOf(tableSchema(relation.table))
    relations = relationsOf(columns)
  }
  return undefined
}

/** A field of the resource by the name users see: a column, a join field or (for reads) a synthetic one. */
export function resolveField(resource: Resource, name: string): FieldInfo | undefined {
  const synthetic = resource.synthetic[name]
  if (synthetic) return { kind: synthetic.kind, alias: '', column: name, path: [], expression: synthetic.expression }
  return resolveRelationPath(resource, name.split('__'))
}

/** JSON columns and synthetic fields are never filterable (resource-api §8.1). */
function filterable(resource: Resource, parts: string[]): FieldInfo | undefined {
  const field = filterablePath(resource, parts)
  return field && field.kind !== 'json' && !field.expression ? field : undefined
}

function filterablePath(resource: Resource, parts: string[]): FieldInfo | undefined {
  const name = parts.join('__')
  const allowed = new Set(resource.filtering)
  if (allowed.has(name)) return resolveField(resource, name)
  if (parts.length === 1) return allowed.has(`${name}_id`) ? resolveField(resource, `${name}_id`) : undefined
  const head = parts[0]
  const traversable = allowed.has(`${head}_id`) || resource.filtering.some((f) => f.startsWith(`${head}__`))
  return traversable ? resolveRelationPath(resource, parts) : undefined
}

type Scalar = string | number | boolean | null
const NEVER = sql<SqlBool>`false`

/** How a query value of each kind is read, and what a client is told it should have been. */
const READERS: Partial<Record<ColumnKind, [read: (text: string) => Scalar | undefined, expected: string]>> = {
  float: [parseFloatStrict, 'number'],
  boolean: [parseBoolean, 'boolean'],
  date: [parseDate, 'date YYYY-MM-DD'],
  datetime: [parseTimestamp, 'ISO 8601 date or date-time'],
}

/** Coerces one query value for a field kind; `undefined` = out of range (matches nothing). */
function coerce(param: string, kind: ColumnKind, text: string): Scalar | undefined {
  if (NULL_TOKENS.has(text)) return null
  if (kind === 'integer' || kind === 'related') {
    const n = parseInteger(text)
    if (n === undefined) throw invalidValue(param, text, 'integer')
    return isInt32(n) ? n : undefined
  }
  const reader = READERS[kind]
  if (!reader) return text
  const value = reader[0](text)
  if (value === undefined) throw invalidValue(param, text, reader[1])
  return value
}

export function ref(field: FieldInfo) {
  return field.expression ?? sql.ref(`${field.alias}.${field.column}`)
}

function typed(kind: ColumnKind, value: Scalar) {
  // Bound values keep their column's type so comparisons never fall back to text.
  if (kind === 'date') return sql`${value}::date`
  if (kind === 'datetime') return sql`${value}::timestamptz`
  return sql`${value}`
}

/** One condition for `param` (already resolved to `field` and `lookup`) over its raw values. */
export function condition(param: string, field: FieldInfo, lookup: Lookup, values: string[]): Expression<SqlBool> {
  const column = ref(field)
  const kind = field.kind
  const last = values[values.length - 1]
  // A list (`in`, `range`) may come in several parts; any other filter has one value, and two
  // different ones make the request ambiguous (the same rule as single-valued parameters).
  if (lookup !== 'in' && lookup !== 'range' && values.some((v) => v !== last)) {
    throw badRequest('DUPLICATE_PARAMETER', `Parameter ${param} is given more than once with different values`)
  }
  switch (lookup) {
    case 'isnull': {
      const b = parseBoolean(last)
      if (b === undefined) throw invalidValue(param, last, 'boolean')
      return b ? sql<SqlBool>`${column} is null` : sql<SqlBool>`${column} is not null`
    }
    case 'in':
    case 'range': {
      const items = values
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter((v) => v !== '')
      const coerced = items.map((v) => coerce(param, kind, v))
      if (lookup === 'range') {
        if (coerced.length !== 2) throw invalidValue(param, values.join(','), 'two comma-separated values')
        const [lo, hi] = coerced
        if (lo === undefined || hi === undefined || lo === null || hi === null) return NEVER
        return sql<SqlBool>`${column} between ${typed(kind, lo)} and ${typed(kind, hi)}`
      }
      const present = coerced.filter((v): v is Exclude<Scalar, null> => v !== undefined && v !== null)
      const withNull = coerced.includes(null)
      const parts: Expression<SqlBool>[] = []
      if (present.length) parts.push(sql<SqlBool>`${column} in (${sql.join(present.map((v) => typed(kind, v)))})`)
      if (withNull) parts.push(sql<SqlBool>`${column} is null`)
      return parts.length ? sql<SqlBool>`(${sql.join(parts, sql` or `)})` : NEVER
    }
    case 'year':
    case 'month':
    case 'day': {
      if (NULL_TOKENS.has(last)) return NEVER
      const n = parseInteger(last)
      if (n === undefined) throw invalidValue(param, last, 'integer')
      return sql<SqlBool>`extract(${sql.raw(lookup)} from ${column}) = ${n}`
    }
  }
  const value = coerce(param, kind, last)
  if (value === undefined) return NEVER
  if (value === null) return lookup === 'exact' || lookup === 'iexact' ? sql<SqlBool>`${column} is null` : NEVER
  const v = typed(kind, value)
  switch (lookup) {
    case 'exact':
      return sql<SqlBool>`${column} = ${v}`
    case 'iexact':
      return sql<SqlBool>`lower(${column}) = lower(${v})`
    case 'contains':
      return sql<SqlBool>`strpos(${column}, ${v}) > 0`
    case 'icontains':
      return sql<SqlBool>`strpos(lower(${column}), lower(${v})) > 0`
    case 'startswith':
      return sql<SqlBool>`starts_with(${column}, ${v})`
    case 'istartswith':
      return sql<SqlBool>`starts_with(lower(${column}), lower(${v}))`
    case 'endswith':
      return sql<SqlBool>`right(${column}, char_length(${v})) = ${v}`
    case 'iendswith':
      return sql<SqlBool>`lower(right(${column}, char_length(${v}))) = lower(${v})`
    case 'gt':
      return sql<SqlBool>`${column} > ${v}`
    case 'gte':
      return sql<SqlBool>`${column} >= ${v}`
    case 'lt':
      return sql<SqlBool>`${column} < ${v}`
    case 'lte':
      return sql<SqlBool>`${column} <= ${v}`
  }
  throw new Error(`unhandled lookup ${lookup}`)
}

export interface ParsedFilters {
  conditions: Expression<SqlBool>[]
  /** Relation paths the conditions read through. */
  joins: string[][]
}

/**
 * Translates filter parameters (name -> raw values, in request order) into conditions. A column
 * derived from a secret (a key's hash) is filterable only with `secrets` (a superuser's request):
 * for anyone else it does not exist, so prefix filters cannot recover it a digit at a time.
 */
export function parseFilters(resource: Resource, params: Array<[string, string[]]>, { secrets = false } = {}): ParsedFilters {
  const conditions: Expression<SqlBool>[] = []
  const joins: string[][] = []
  for (const [param, values] of params) {
    const parts = param.split('__')
    const lookup: Lookup = parts.length > 1 && isLookup(parts[parts.length - 1]) ? (parts.pop() as Lookup) : 'exact'
    const field = filterable(resource, parts)
    if (!field || (field.meta?.secret && !secrets)) throw badRequest('UNKNOWN_FILTER', `The '${parts.join('__')}' field does not allow filtering.`)
    if (!LOOKUPS_BY_KIND[field.kind].includes(lookup)) {
      throw badRequest('INVALID_LOOKUP', `'${lookup}' is not an allowed filter on the '${parts.join('__')}' field.`)
    }
    conditions.push(condition(param, field, lookup, values))
    if (field.path.length) joins.push(field.path)
  }
  return { conditions, joins }
}
