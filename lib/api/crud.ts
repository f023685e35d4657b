// The generic operations behind every model resource: list, detail, create, update, delete.
// This is where HTTP-level rules meet SQL; resources only add hooks.
import { sql, type Expression, type SqlBool } from 'kysely'
import { tables } from '../../schemas/index.js'
import { columnsOf, type ColumnKind } from '../../schemas/columns.js'
import { ApiError, notFound, validationError } from '../core/errors.js'
import { parseFilters, ref, resolveField } from './filters.js'
import {
  relationsOf,
  type BodyEncoding,
  type Context,
  type JsonListResult,
  type ListQuery,
  type ListResult,
  type Meta,
  type Resource,
  type Row,
} from './resource.js'
import { RawJson } from '../core/raw-json.js'
import { lockCampaignsOf } from '../engine/campaign-locks.js'
import { coerceBody, checkRequiredFields, writeOnlyColumns } from './body.js'
import { assertOwner, permittedLocations } from '../engine/access.js'

/**
 * `column = ANY(ids)`, or false for an empty list. The ids travel as ONE array parameter: a selection
 * can hold thousands of locations, and thousands of bound parameters make each statement slow to
 * parse and plan (measured: 80 ms for 9,899 ids, bench/README.md).
 */
export function inList(column: string, ids: number[]): Expression<SqlBool> {
  return ids.length ? sql<SqlBool>`${sql.ref(column)} = any(${ids}::int4[])` : sql<SqlBool>`false`
}

/** Tables and columns named at run time by a declaration (its table, filters, fields), checked against its schema before a query is built. */
// biome-ignore lint/suspicious/noExplicitAny: a column's type is its schema's, known at run time only
type DeclaredTables = Record<string, Record<string, any>>

/** The database with the declared tables of the generic API (Kysely's `withTables`: no cast). */
export const dynamic = (ctx: Context) => ctx.db.withTables<DeclaredTables>()

/** Adds LEFT JOINs for relation paths (deduplicated, prefixes first). Aliases are the path joined by `__`. */
export function withJoins(query: ListQuery, resource: Resource, paths: string[][]): ListQuery {
  const done = new Set<string>()
  for (const path of paths) {
    let relations = resource.relations
    let from = 't'
    for (let i = 0; i < path.length; i++) {
      const relation = relations[path[i]]
      const alias = path.slice(0, i + 1).join('__')
      if (!done.has(alias)) {
        done.add(alias)
        query = query.leftJoin(`${relation.table} as ${alias}`, `${alias}.id`, `${from}.${relation.column}`)
      }
      relations = relationsOf(columnsOf(tables[relation.table as keyof typeof tables]))
      from = alias
    }
  }
  return query
}

/**
 * Base read of a model resource: its table as `t`, limited to the rows the requester may reach (their
 * subtree's locations when restricted, and the declaration's row filter; lib/engine/access.ts).
 */
export function baseQuery(ctx: Context): ListQuery {
  const { resource, user } = ctx
  let query = dynamic(ctx).selectFrom(`${resource.table} as t`)
  if (resource.scope) query = query.where(resource.scope)
  if (user.is_superuser) return query
  if (user.restricted && resource.location_column) {
    query = query.where(sql.ref(`t.${resource.location_column}`), 'in', permittedLocations(user))
  }
  const limit = resource.row_filter?.(ctx)
  return limit ? query.where(limit) : query
}

/** Select list for `fields` (query_fields names) and the relation paths they read through. */
function projection(resource: Resource, fields: string[]) {
  const paths: string[][] = []
  const kinds: ColumnKind[] = []
  const selections = fields.map((name) => {
    const field = resolveField(resource, name)
    if (!field) throw new Error(`query field ${name} of ${resource.name} does not resolve`)
    if (field.path.length) paths.push(field.path)
    kinds.push(field.kind)
    return sql`${ref(field)}`.as(name)
  })
  return { selections, paths, kinds }
}

export interface ListOptions {
  limit: number
  offset: number
  order: Array<{ field: string; desc: boolean }>
  fields: string[]
  filters: Array<[string, string[]]>
}

/** The resource's rows as `t` with the generic filters and the requester's locations applied. */
export function filteredQuery(ctx: Context, filters: ReturnType<typeof parseFilters>, paths: string[][] = []): ListQuery {
  // Filters, ordering and projection may read through the same relation: one join each.
  let query = withJoins(baseQuery(ctx), ctx.resource, [...filters.joins, ...paths])
  for (const condition of filters.conditions) query = query.where(condition)
  return query
}

/**
 * A page's rows and the hook's meta at once, the page's statement sent first: it is usually the
 * longer of the two, and on a machine with few cores the statement sent second starts measurably
 * later (the campaign read took ~1 ms more with its meta ids read sent first, bench/README.md,
 * "Datapoint reads"). `page` is started by the caller, as this function's argument, before meta's read.
 */
export function withMeta<T>(page: Promise<T>, meta: Meta): Promise<[T, Row]> {
  return Promise.all([page, typeof meta === 'function' ? meta() : meta])
}

/**
 * One page of the list read of §9 as a statement: filters, the resource's list hook, ordering, the
 * page and the total count as `__total`; and the hook's meta (not read yet).
 */
async function pageQuery(ctx: Context, options: ListOptions, filters: ReturnType<typeof parseFilters>) {
  const { resource } = ctx
  const order = options.order.map(({ field, desc }) => ({ field: resolveField(resource, field)!, desc }))
  const { selections, paths, kinds } = projection(resource, options.fields)
  let query = filteredQuery(ctx, filters, [...order.map((o) => o.field.path), ...paths])
  let meta: Meta = {}
  if (resource.hooks.list) ({ query, meta = {} } = await resource.hooks.list(ctx, query))
  for (const { field, desc } of order) query = query.orderBy(ref(field), desc ? 'desc' : 'asc')
  query = query.select(selections).select(sql<number>`count(*) over ()`.as('__total')).limit(options.limit).offset(options.offset)
  return { query, meta, kinds }
}

/** The total when a page is empty: past the last page the window function has no row to ride on. */
async function countPastEnd(ctx: Context, options: ListOptions, filters: ReturnType<typeof parseFilters>): Promise<number> {
  if (options.offset === 0) return 0
  let count = filteredQuery(ctx, filters)
  // The hook's meta is not read: only its filters count.
  if (ctx.resource.hooks.list) count = (await ctx.resource.hooks.list(ctx, count)).query
  const result = await count.select(sql<number>`count(*)`.as('n')).executeTakeFirst()
  return Number(result?.n ?? 0)
}

/** The page of the read mode the request asks for, when one does (the mode replaces the generic read). */
async function hookedPage(ctx: Context, options: ListOptions, filters: ReturnType<typeof parseFilters>) {
  const mode = ctx.resource.modes.find((m) => m.when(ctx))
  if (!mode) return undefined
  const result = await mode.read(ctx, options, filteredQuery(ctx, filters))
  return { ...result, meta: result.meta ?? {} }
}

/** The generic page (`pageQuery`'s) as rows, with its total and the hook's meta. */
async function genericRows(ctx: Context, options: ListOptions, filters: ReturnType<typeof parseFilters>, page?: Awaited<ReturnType<typeof pageQuery>>) {
  const { query, meta } = page ?? (await pageQuery(ctx, options, filters))
  // A hook's meta may be a read of its own (e.g. the selected location ids): both run at once.
  const [rows, extras] = (await withMeta(query.execute(), meta)) as [Row[], Row]
  const total = rows.length ? Number(rows[0].__total) : await countPastEnd(ctx, options, filters)
  for (const row of rows) delete row.__total
  return { rows, total, meta: extras }
}

/** The list read of §9 as rows (CSV export, all_meta): one page, the total count and meta extras. */
export async function listRows(ctx: Context, options: ListOptions): Promise<ListResult & { meta: Row }> {
  const filters = parseFilters(ctx.resource, options.filters, { secrets: ctx.user.is_superuser })
  return (await hookedPage(ctx, options, filters)) ?? genericRows(ctx, options, filters)
}

/**
 * Field kinds whose JSON as PostgreSQL writes it is the JSON of the value as read through pg (the
 * same number, string or boolean); timestamps and JSON columns are formatted differently.
 */
const JSON_ALIKE: ReadonlySet<ColumnKind> = new Set(['integer', 'related', 'float', 'string', 'boolean', 'date'])

/**
 * The list read of §9 for a JSON response. When every field is of a JSON-alike kind, PostgreSQL
 * writes the page's objects as one JSON text, which goes into the response unparsed (a 1,000-row
 * datapoint page otherwise spends milliseconds in pg's row parsing and JSON.stringify).
 */
export async function listPage(ctx: Context, options: ListOptions): Promise<(ListResult | JsonListResult) & { meta: Row }> {
  const filters = parseFilters(ctx.resource, options.filters, { secrets: ctx.user.is_superuser })
  const hooked = await hookedPage(ctx, options, filters)
  if (hooked) return hooked
  const page = await pageQuery(ctx, options, filters)
  const { query, meta, kinds } = page
  if (!kinds.every((kind) => JSON_ALIKE.has(kind))) return genericRows(ctx, options, filters, page)
  // Non-finite floats become null, as JSON.stringify writes them. The objects keep the page's order:
  // they are aggregated straight from its ordered scan.
  const fields = options.fields.map((name, i) =>
    kinds[i] === 'float'
      ? sql`case when p.${sql.ref(name)} in ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8) then null else p.${sql.ref(name)} end as ${sql.ref(name)}`
      : sql`p.${sql.ref(name)}`,
  )
  const statement = sql<{ objects: string; total: number | null }>`with p as (${query})
    select (select coalesce(json_agg(o), '[]')::text from (select ${sql.join(fields)} from p) o) as objects,
           (select max(__total) from p) as total`
  const [{ rows }, extras] = await withMeta(statement.execute(ctx.db), meta)
  const { objects, total } = rows[0]
  return { json: new RawJson(objects), total: total === null ? await countPastEnd(ctx, options, filters) : Number(total), meta: extras }
}

/** The stored row (every column) or undefined; restricted users do not see rows outside their subtree. */
export async function findRow(ctx: Context, id: number): Promise<Row | undefined> {
  return (await baseQuery(ctx).selectAll('t').where('t.id', '=', id).executeTakeFirst()) as Row | undefined
}

/** The row as written, whoever asks (hooks need it even before it is linked into the tree). */
async function storedRow(ctx: Context, id: number): Promise<Row> {
  return (await dynamic(ctx).selectFrom(ctx.resource.table!).selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as Row
}

/** §9 detail representation: every column, the join fields of query_fields, synthetic fields, extras. */
export async function readDetail(ctx: Context, id: number, { extras = true } = {}): Promise<Row> {
  const { resource } = ctx
  const columns = resource.detail_fields
  // Join and synthetic fields; result_fields are shaped by a read mode and have no detail column.
  const derived = resource.query_fields.filter((f) => !(f in resource.columns) && !(f in resource.result_fields))
  const { selections, paths } = projection(resource, [...columns, ...derived])
  const row = (await withJoins(baseQuery(ctx), resource, paths).select(selections).where('t.id', '=', id).executeTakeFirst()) as Row | undefined
  if (!row) throw notFound(ctx.urlName, id)
  return extras && resource.hooks.detail ? resource.hooks.detail(ctx, row) : row
}

/** JSON columns travel as JSON text: node-postgres would turn a JS array into a PostgreSQL array. */
function toDatabase(resource: Resource, values: Row): Row {
  const out: Row = { ...values }
  for (const [key, value] of Object.entries(values)) {
    if (resource.columns[key]?.kind === 'json' && value !== null && value !== undefined) out[key] = JSON.stringify(value)
  }
  return out
}

export async function createRow(ctx: Context, body: Row, encoding: BodyEncoding): Promise<Row> {
  const { resource } = ctx
  // A resource with its own create checks its required fields itself (an upload may default some).
  if (resource.hooks.create) {
    const created = await resource.hooks.create(ctx, body, encoding)
    if (typeof created === 'number') return readDetail(ctx, created, { extras: false })
    return { ...(await readDetail(ctx, created.id, { extras: false })), ...created.once }
  }
  checkRequiredFields(resource, body)
  let values = { ...coerceBody(resource, body, encoding), ...(await writeOnlyColumns(resource, body)) }
  if (resource.owner_column) values[resource.owner_column] = ctx.user.id
  values = (await resource.hooks.beforeWrite?.(ctx, values)) ?? values
  const insert = dynamic(ctx).insertInto(resource.table!)
  const { id } = (await (Object.keys(values).length ? insert.values(toDatabase(resource, values)) : insert.defaultValues())
    .returning('id')
    .executeTakeFirstOrThrow()) as { id: number }
  if (resource.hooks.afterWrite) await resource.hooks.afterWrite(ctx, await storedRow(ctx, id))
  return readDetail(ctx, id, { extras: false })
}

export async function updateRow(ctx: Context, id: number, body: Row, encoding: BodyEncoding): Promise<Row> {
  const { resource } = ctx
  const existing = await findRow(ctx, id)
  if (!existing) throw notFound(ctx.urlName, id)
  assertOwner(ctx.user, resource, existing)
  if (body.id !== undefined && body.id !== null && String(body.id) !== String(id)) {
    throw validationError('id', 'must match the id in the URL')
  }
  if (resource.hooks.update) {
    const once = await resource.hooks.update(ctx, existing, body, encoding)
    return { ...(await readDetail(ctx, id, { extras: false })), ...once }
  }
  let values = { ...coerceBody(resource, body, encoding, existing), ...(await writeOnlyColumns(resource, body)) }
  values = (await resource.hooks.beforeWrite?.(ctx, values, existing)) ?? values
  if (Object.keys(values).length) {
    await dynamic(ctx).updateTable(resource.table!).set(toDatabase(resource, values)).where('id', '=', id).execute()
  }
  if (resource.hooks.afterWrite) await resource.hooks.afterWrite(ctx, await storedRow(ctx, id), existing)
  return readDetail(ctx, id, { extras: false })
}

interface Reference {
  table: string
  column: string
}

/** Foreign keys that block a delete of `table` rows (those the database does not cascade itself). */
export function blockingReferences(table: string): Reference[] {
  const references: Reference[] = []
  for (const [name, schema] of Object.entries(tables)) {
    for (const [column, meta] of Object.entries(columnsOf(schema))) {
      if (meta.references === table && meta.onDelete === 'restrict') references.push({ table: name, column })
    }
  }
  return references
}

export async function countDependents(ctx: Context, table: string, ids: number[]): Promise<Record<string, number>> {
  const dependents: Record<string, number> = {}
  for (const { table: child, column } of blockingReferences(table)) {
    const row = await dynamic(ctx).selectFrom(child).select(sql<number>`count(*)`.as('n')).where(column, 'in', ids).executeTakeFirst()
    const n = Number(row?.n ?? 0)
    if (n) dependents[child] = (dependents[child] ?? 0) + n
  }
  return dependents
}

/** Deletes rows and, depth first, every row that references them. Returns the deleted rows by table. */
export async function deleteCascade(ctx: Context, table: string, ids: number[], deleted = new Map<string, Row[]>()): Promise<Map<string, Row[]>> {
  if (!ids.length) return deleted
  for (const { table: child, column } of blockingReferences(table)) {
    const children = await dynamic(ctx).selectFrom(child).select('id').where(column, 'in', ids).execute()
    await deleteCascade(
      ctx,
      child,
      children.map((r) => r.id as number),
      deleted,
    )
  }
  // Raw datapoints have one writer per campaign (lib/engine/campaign-locks.ts), from before the delete.
  if (table === 'datapoint') await lockCampaignsOf(dynamic(ctx), sql`select campaign_id from datapoint where id = any(${ids}::int4[])`)
  const rows = (await dynamic(ctx).deleteFrom(table).where('id', 'in', ids).returningAll().execute()) as Row[]
  deleted.set(table, [...(deleted.get(table) ?? []), ...rows])
  return deleted
}

export function dependentsError(resourceName: string, id: number, dependents: Record<string, number>): ApiError {
  const list = Object.entries(dependents)
    .map(([t, n]) => `${n} ${t} row(s)`)
    .join(', ')
  return new ApiError(409, 'HAS_DEPENDENTS', `Cannot delete ${resourceName} ${id}: referenced by ${list}. Add ?cascade=true to delete them too`, { dependents })
}

/**
 * §11.5: deletes one row (404 if absent), refusing with 409 while other rows reference it unless
 * `cascade`; then runs the afterDelete hooks of every table that lost rows.
 */
export async function deleteRow(ctx: Context, id: number, cascade: boolean, afterDelete: (table: string, rows: Row[]) => Promise<void>): Promise<void> {
  const { resource } = ctx
  const existing = await findRow(ctx, id)
  if (!existing) throw notFound(ctx.urlName, id)
  assertOwner(ctx.user, resource, existing)
  await resource.hooks.beforeDelete?.(ctx, existing)
  if (resource.hooks.remove) return resource.hooks.remove(ctx, existing)
  if (!cascade) {
    const dependents = { ...(await countDependents(ctx, resource.table!, [id])), ...(await resource.hooks.dependents?.(ctx, id)) }
    for (const [table, n] of Object.entries(dependents)) if (!n) delete dependents[table]
    if (Object.keys(dependents).length) throw dependentsError(ctx.urlName, id, dependents)
  }
  const deleted = await deleteCascade(ctx, resource.table!, [id])
  for (const [table, rows] of deleted) await afterDelete(table, rows)
}

/** `DELETE /<r>/?indicator_id=X` for resources that declare it (D13). */
export async function deleteWhere(ctx: Context, column: string, value: string): Promise<Row[]> {
  const { conditions } = parseFilters(ctx.resource, [[column, [value]]], { secrets: ctx.user.is_superuser })
  let query = dynamic(ctx).deleteFrom(`${ctx.resource.table!} as t`)
  for (const c of conditions as Expression<SqlBool>[]) query = query.where(c)
  return (await query.returningAll().execute()) as Row[]
}
