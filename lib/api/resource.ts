// Resource declarations (resource-api §4) and their normalised form. A declaration says what differs;
// `defineResource` derives the rest (columns, relations, filterable fields and their lookups) from the
// table's TypeBox schema, so the dispatcher, /schema and OpenAPI all read the same facts.
import type { RawJson } from '../core/raw-json.js'
import type { TObject, TSchema } from 'typebox'
import type { Kysely, RawBuilder, SelectQueryBuilder } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { columnsOf, tableMeta, type ColumnKind, type ColumnMeta } from '../../schemas/columns.js'
import type { Config } from '../core/config.js'
import type { QueryParams } from './query-params.js'
import { isRequired, joinParams, namesOf, queryReader, RESERVED, type QueryOf, type QuerySchema } from './query.js'
import type { AuthUser } from '../data/auth.js'
import type { Writers } from '../engine/access.js'
import type { JobKindSpec, JobQueue } from '../data/job-queue.js'
import type { Progress } from '../core/progress.js'

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** How a body arrived: JSON keeps types, form fields are strings (resource-api §11.1). */
export type BodyEncoding = 'json' | 'form'

export interface Relation {
  column: string
  table: string
}

/**
 * What a hook sees: the database (a transaction for writes), the requester and the request's query.
 * `P`: the parameters the resource declares, which type `params`; the dispatcher's own code, which
 * serves every resource, sees them untyped.
 */
export interface Context<P extends QuerySchema = QuerySchema> {
  /** Where it reads and writes: a write's transaction (Kysely's Transaction is a Kysely), else the pool. */
  db: Kysely<DB>
  user: AuthUser
  /** The raw query string, in order: filters, `get_params`, page links. */
  query: QueryParams
  /**
   * The resource's declared parameters, typed (lib/api/query.ts), as the list route's validator read
   * them (a job's, from its parameters); empty for other requests.
   */
  params: QueryOf<P>
  config: Config
  resource: Resource
  /** Resource name as spelled in the URL (canonical or alias). */
  urlName: string
  /** The background job queue (lib/data/job-queue.ts). */
  jobs: JobQueue
  /** Where an action reports how far it has come (a background job's progress). */
  progress?: Progress
  /** The request's id (X-Request-Id), recorded with the changes it makes. */
  requestId?: string
}

// The dispatcher builds dynamic queries over `t`, the resource's table; hooks extend them.
// biome-ignore lint/suspicious/noExplicitAny: tables and columns chosen at run time, checked by the schemas
export type ListQuery = SelectQueryBuilder<any, any, any>
export type Row = Record<string, unknown>

export interface ListPage {
  limit: number
  offset: number
  order: Array<{ field: string; desc: boolean }>
}

export interface ListResult {
  rows: Row[]
  total: number
  meta?: Row
  /** The objects' keys when they are not the resource's query_fields (e.g. a grouped mode). */
  fields?: string[]
}

/** A list page whose objects PostgreSQL already wrote as JSON text (lib/api/crud.ts listPage). */
export interface JsonListResult extends Omit<ListResult, 'rows'> {
  json: RawJson
}

/** A pivot for `?format=csv&shape=wide`: the header and a query whose columns are in header order. */
export interface WideExport {
  header: string[]
  query: ListQuery
}

/**
 * A list hook's meta extras, or the read that produces them. A read is started by the caller once
 * the page's statement has gone out (`withMeta`, lib/api/crud.ts): the page is the longer read, and the
 * statement sent first is the one PostgreSQL starts first.
 */
export type Meta = Row | (() => Promise<Row>)

/**
 * What a declaration changes of the generic behaviour: each hook replaces a step or wraps it (adds to it).
 * `P`: the resource's declared parameters, as `ctx.params` holds them in the hooks of a list read (`list`,
 * `wide`, `csv`); a write, a detail or a delete reads none (its `ctx.params` is empty).
 */
export interface Hooks<P extends QuerySchema = QuerySchema> {
  /** Wraps the list read: adds the resource's own parameters to the query; may return meta extras (see `Meta`). */
  list?: (ctx: Context<P>, query: ListQuery) => Promise<{ query: ListQuery; meta?: Meta }>
  /** Replaces the wide export's query: `?format=csv&shape=wide` (datapoint resources), the pivot of the long rows. */
  wide?: (ctx: Context<P>, filtered: ListQuery) => Promise<WideExport>
  /**
   * Replaces the generic INSERT (e.g. document upload); returns the new row's id, or the id and fields
   * the 201 answer carries once and no read ever shows again (a new API key).
   */
  create?: (ctx: Context, body: Row, encoding: BodyEncoding) => Promise<number | { id: number; once: Row }>
  /**
   * Wraps the create: its work that needs no database, done before its transaction opens (an upload's
   * file read in a thread); on the embedded database a transaction holds the one session, so everyone's
   * reads would wait for that work too. Returns the body `create` gets, and what to clean up once the
   * write is over, whatever its outcome.
   */
  prepareCreate?: (ctx: Context, body: Row) => Promise<{ body: Row; release: () => Promise<void> }>
  /** Replaces the generic UPDATE (writes that land in another table, e.g. data entry); may return fields the answer carries once. */
  // biome-ignore lint/suspicious/noConfusingVoidType: an update with nothing to add returns nothing
  update?: (ctx: Context, existing: Row, body: Row, encoding: BodyEncoding) => Promise<Row | void>
  /** Replaces the generic DELETE of one row (after the 404 and permission checks). */
  remove?: (ctx: Context, existing: Row) => Promise<void>
  /** Wraps INSERT/UPDATE: checks and completes values before them; `existing` is the row being updated. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that only checks returns nothing
  beforeWrite?: (ctx: Context, values: Row, existing?: Row) => Promise<Row | void>
  /** Wraps INSERT/UPDATE: side effects after them, in the same transaction (tree maintenance, caches). */
  afterWrite?: (ctx: Context, row: Row, previous?: Row) => Promise<void>
  /** Wraps the 409 HAS_DEPENDENTS count: dependents reached indirectly (e.g. a document's datapoints). */
  dependents?: (ctx: Context, id: number) => Promise<Record<string, number>>
  /** Wraps DELETE: checks before it (e.g. protected rows). */
  beforeDelete?: (ctx: Context, row: Row) => Promise<void>
  /** Wraps the detail read: extras of the representation. */
  detail?: (ctx: Context, row: Row) => Promise<Row>
  /** Replaces the long CSV export (e.g. the raw file of a document's submissions). */
  csv?: (ctx: Context<P>) => Promise<{ header: string[]; rows: unknown[][] }>
  /** Wraps DELETE: side effects after rows of this resource's table were deleted, directly or by a cascade. */
  afterDelete?: (ctx: Context, rows: Row[]) => Promise<void>
}

/** A resource's declaration; `P`, its own query parameters (`params`), types what its hooks, modes and action see. */
export interface ResourceDeclaration<P extends QuerySchema = QuerySchema> {
  name: string
  aliases?: string[]
  kind?: 'model' | 'non_model'
  /** The table's TypeBox schema (model resources). */
  schema?: TObject
  /** Projection of list objects; may contain join fields `rel__col`. Default: every column. */
  query_fields?: string[]
  /** Filterable fields. Default: query_fields minus JSON columns and synthetic fields. */
  filtering?: string[]
  /**
   * What a list cannot do without besides its required declared parameters (`Param.x(help, { required:
   * true })`): filters, and the declared parameters a lookup by id stands in for (`required_unless_id`).
   */
  GET_params_required?: string[]
  /** A lookup by `id` or `id__in` stands in for GET_params_required (the original client reads single rows so). */
  required_unless_id?: boolean
  required_fields_for_post?: string[]
  /** The resource's own query parameters, each a `Param` (lib/api/query.ts). */
  params?: P
  ordering?: string[]
  methods?: { list: Method[]; detail: Method[] }
  /** Who may POST and PATCH, or run the action (lib/engine/access.ts). Default: metadata editors for models, every user for actions. */
  writers?: Writers
  list_delete_by?: string[]
  /** Read-only fields computed from the row `t` (e.g. location `lvl`), with their kind. */
  synthetic?: Record<string, Synthetic>
  /**
   * Synthetic fields a list object carries only when a boolean parameter asks for them, by field:
   * the parameter's name (e.g. `status` with `with_status=1`). Costly to compute, so never a default.
   */
  optional_fields?: Record<string, string>
  /** The column holding the row's location: restricted users only reach rows inside their subtree. */
  location_column?: string
  /**
   * The column naming the row's owner, set to the requester on creation: only the owner, superusers
   * and metadata editors change or delete the row (lib/engine/access.ts, assertOwner).
   */
  owner_column?: string
  /**
   * The rows of `t` a non-superuser may reach, when that is not decided by `location_column` alone
   * (e.g. the raw rows of a document by their mapped location); undefined for every row.
   */
  row_filter?: (ctx: Context) => RawBuilder<boolean> | undefined
  /** The rows of the table this resource serves, when not all of them (e.g. date datapoints only). */
  scope?: RawBuilder<boolean>
  /** Columns of the detail representation, when not every column (e.g. no internal bookkeeping). */
  detail_fields?: string[]
  /** Columns a client may write; other columns in a body are refused unless they echo the stored value. */
  writable?: string[]
  /** Body fields that are no column and never read back (a user's password): each turned into column values. */
  write_only?: Record<string, WriteOnly>
  hooks?: Hooks<NoInfer<P>>
  /** Accepts multipart/form-data bodies (uploads). */
  multipart?: boolean
  /** Non-model resources: run the action, return the result set. */
  action?: (ctx: Context<NoInfer<P>>) => Promise<Row[]>
  /**
   * The action's work that needs no transaction, started before it opens (a document's file read in a
   * thread): on the embedded database a transaction holds the one session. What it finds, the action
   * takes; the function it returns forgets it, once the action is over.
   */
  prepare?: (ctx: Context<NoInfer<P>>) => Promise<() => void>
  /** Rows change without a notification (a job's state): details and lists are read afresh, never cached. */
  volatile?: boolean
  /**
   * POST and PATCH take an Idempotency-Key (a repeat answers the first answer, writing nothing) and PATCH
   * an If-Match with the row's ETag (412 when it changed); their answers carry the row's ETag
   * (docs/decisions.md, "Retried writes").
   */
  retryable_writes?: boolean
  /** Non-model resources whose action only reads (all_meta): its answers are cached like a list's. */
  reads_only?: boolean
  /** Non-model resources: the fields of the returned objects (for /schema). */
  result_fields?: Record<string, ColumnKind>
  /** OpenAPI: the JSON schemas of result fields whose kind says too little (an object's `json`). */
  result_schemas?: Record<string, Record<string, unknown>>
  /** OpenAPI: fields the answer of a POST or PATCH adds to the row (checks the write ran), by name. */
  write_fields?: Record<string, Record<string, unknown>>
  /**
   * The list's read modes besides the plain one (grouped dates, ColumnChart), each one object: the
   * first whose `when` holds reads the page and, in a wide export, the pivot.
   */
  modes?: Array<ReadMode<NoInfer<P>>>
  /** Non-model resources whose objects are another resource's detail (the pipeline's document). */
  result_of?: Resource
  /** OpenAPI: the list envelope's `meta` fields the resource adds (JSON schemas by name). */
  meta_fields?: Record<string, Record<string, unknown>>
  description?: string
}

/** A write-only body field: its JSON schema (for OpenAPI) and the column values it becomes. */
export interface WriteOnly {
  schema: Record<string, unknown>
  columns: (value: unknown) => Promise<Row>
}

/**
 * A read mode of a list: when it applies, what it reads, its objects' shape and its wide export. `P`:
 * the parameters its functions read, the resource's and its own.
 */
export interface ReadMode<P extends QuerySchema = QuerySchema> {
  /** Whether the request asks for this mode. */
  when: (ctx: Context<P>) => boolean
  /** Parameters only this mode reads (validated and documented with the resource's). */
  params?: QuerySchema
  /** OpenAPI: its objects' shape when not the resource's row; the document says each object is the row or one of these. */
  rowSchema?: Record<string, unknown>
  /** Replaces the list read: this mode's page. `filtered` is the table as `t` with the generic filters and the requester's locations applied. */
  read: (ctx: Context<P>, page: ListPage, filtered: ListQuery) => Promise<ListResult>
  /** Replaces the wide export's query in this mode (else the resource's `wide` hook). */
  wide?: (ctx: Context<P>, filtered: ListQuery) => Promise<WideExport>
}

export interface Synthetic {
  kind: ColumnKind
  expression: RawBuilder<unknown>
}

export interface FieldInfo {
  kind: Exclude<ColumnKind, 'related'> | 'related'
  /** Table alias the value is read from (`t` or a relation path). */
  alias: string
  column: string
  /** Relation path to join, outermost first (e.g. ['indicator']). */
  path: string[]
  meta?: ColumnMeta
  /** Synthetic fields are an expression rather than a column. */
  expression?: RawBuilder<unknown>
}

export interface Resource
  extends Required<
    Omit<
      ResourceDeclaration,
      | 'schema'
      | 'hooks'
      | 'action'
      | 'prepare'
      | 'location_column'
      | 'owner_column'
      | 'row_filter'
      | 'description'
      | 'multipart'
      | 'scope'
      | 'detail_fields'
      | 'writable'
      | 'modes'
      | 'meta_fields'
      | 'result_of'
      | 'result_schemas'
      | 'write_fields'
    >
  > {
  result_of?: Resource
  result_schemas: Record<string, Record<string, unknown>>
  write_fields: Record<string, Record<string, unknown>>
  /** Every name its declared parameters are read under (their own and their aliases), to the parameter's own. */
  param_names: Map<string, string>
  /** Reads the declared parameters of a list request (compiled once, from `params`), or throws its 400. */
  readQuery: (raw: QueryParams) => Record<string, unknown>
  /** Whether a list GET has parameters to read (declared or required): else its route takes no validation step. */
  declares_query: boolean
  modes: ReadMode[]
  /** OpenAPI: the objects' shapes of the modes that have their own. */
  row_modes: Array<Record<string, unknown>>
  meta_fields: Record<string, Record<string, unknown>>
  scope?: RawBuilder<boolean>
  detail_fields: string[]
  writable?: string[]
  write_only: Record<string, WriteOnly>
  multipart: boolean
  schema?: TObject
  table?: string
  hooks: Hooks
  action?: ResourceDeclaration['action']
  prepare?: ResourceDeclaration['prepare']
  location_column?: string
  owner_column?: string
  row_filter?: ResourceDeclaration['row_filter']
  description?: string
  columns: Record<string, ColumnMeta>
  relations: Record<string, Relation>
}

const ALL_MODEL_METHODS = { list: ['GET', 'POST', 'DELETE'] as Method[], detail: ['GET', 'PATCH', 'DELETE'] as Method[] }

export function relationsOf(columns: Record<string, ColumnMeta>): Record<string, Relation> {
  const relations: Record<string, Relation> = {}
  for (const [name, meta] of Object.entries(columns)) {
    if (meta.references && name.endsWith('_id')) relations[name.slice(0, -3)] = { column: name, table: meta.references }
  }
  return relations
}

/**
 * The resource's parameters and its modes' own, each declared once, none a reserved list parameter
 * (`LIST_PARAMS`), which every list declares: else the declaration is refused, at start.
 */
function declaredParams(decl: ResourceDeclaration): QuerySchema {
  try {
    const params = joinParams(decl.params ?? {}, ...(decl.modes ?? []).map((mode) => mode.params ?? {}))
    const reserved = [...namesOf(params).keys()].find((name) => RESERVED.includes(name))
    if (reserved) throw new Error(`query parameter ${reserved} is declared twice (it is a reserved list parameter)`)
    return params
  } catch (error) {
    throw new Error(`${decl.name}: ${(error as Error).message}`)
  }
}

/**
 * What a list requires: its required declared parameters, then GET_params_required. A name in both is
 * said twice; a required declared parameter where a lookup by id stands in would be typed as always
 * there and be absent: either is refused, at start.
 */
function requiredParams(decl: ResourceDeclaration, params: QuerySchema, unlessId: boolean): string[] {
  const declared = Object.keys(params).filter((name) => isRequired(params[name]))
  const listed = decl.GET_params_required ?? []
  const twice = listed.find((name) => declared.includes(name))
  if (twice) throw new Error(`${decl.name}: ${twice} is declared required and listed in GET_params_required`)
  if (declared.length && unlessId) {
    throw new Error(`${decl.name}: with required_unless_id, list ${declared.join(', ')} in GET_params_required, not as required parameters`)
  }
  return [...declared, ...listed]
}

/** A declaration without `params`: its hooks read no parameter. */
type NoParams = Record<never, TSchema>

/**
 * The declaration normalised. `P` is inferred from `params`: hooks, modes and the action read
 * `ctx.params` as `QueryOf<P>` (a mode's own parameters in its own `P`), no cast.
 */
export function defineResource<P extends QuerySchema = NoParams>(declaration: ResourceDeclaration<P>): Resource {
  // The dispatcher serves every resource alike, with `params` as `readQuery` read them from `P` (and the
  // modes' own): the hooks typed by `P` get exactly that, so the declaration is held untyped from here.
  const decl = declaration as unknown as ResourceDeclaration
  const kind = decl.kind ?? (decl.schema ? 'model' : 'non_model')
  const columns = decl.schema ? columnsOf(decl.schema) : {}
  const synthetic = decl.synthetic ?? {}
  const query_fields = decl.query_fields ?? Object.keys(columns)
  const filtering = decl.filtering ?? query_fields.filter((f) => !(f in synthetic) && columns[f]?.kind !== 'json')
  const shown = [...query_fields, ...(decl.detail_fields ?? Object.keys(columns)), ...(decl.ordering ?? []).map((f) => f.replace(/^-/, ''))]
  const params = declaredParams(decl)
  const required_unless_id = decl.required_unless_id ?? false
  const GET_params_required = requiredParams(decl, params, required_unless_id)
  const secret = shown.find((f) => columns[f]?.secret)
  // A column derived from a secret is never shown or ordered by (an order reveals it too).
  if (secret) throw new Error(`${decl.name}: the secret column ${secret} must not be shown or ordered by`)
  return {
    name: decl.name,
    aliases: decl.aliases ?? [],
    kind,
    schema: decl.schema,
    table: decl.schema ? tableMeta(decl.schema).name : undefined,
    query_fields,
    filtering,
    GET_params_required,
    required_unless_id,
    required_fields_for_post: decl.required_fields_for_post ?? [],
    params,
    param_names: namesOf(params),
    readQuery: queryReader(params, { names: GET_params_required, unlessId: required_unless_id }),
    declares_query: Object.keys(params).length > 0 || GET_params_required.length > 0,
    ordering: decl.ordering ?? ['id'],
    methods: decl.methods ?? (kind === 'model' ? ALL_MODEL_METHODS : { list: ['GET'], detail: [] }),
    writers: decl.writers ?? (kind === 'model' ? 'metadata_editors' : 'users'),
    list_delete_by: decl.list_delete_by ?? [],
    synthetic,
    optional_fields: decl.optional_fields ?? {},
    location_column: decl.location_column,
    owner_column: decl.owner_column,
    row_filter: decl.row_filter,
    scope: decl.scope,
    detail_fields: decl.detail_fields ?? Object.keys(columns),
    writable: decl.writable,
    write_only: decl.write_only ?? {},
    multipart: decl.multipart ?? false,
    hooks: decl.hooks ?? {},
    action: decl.action,
    prepare: decl.prepare as ResourceDeclaration['prepare'],
    volatile: decl.volatile ?? false,
    retryable_writes: decl.retryable_writes ?? false,
    reads_only: decl.reads_only ?? false,
    result_fields: decl.result_fields ?? {},
    result_schemas: decl.result_schemas ?? {},
    write_fields: decl.write_fields ?? {},
    modes: decl.modes ?? [],
    row_modes: (decl.modes ?? []).flatMap((mode) => (mode.rowSchema ? [mode.rowSchema] : [])),
    result_of: decl.result_of,
    meta_fields: decl.meta_fields ?? {},
    description: decl.description,
    columns,
    relations: relationsOf(columns),
  }
}

/**
 * A kind of background job (resources/jobs.ts): how the queue treats it, the check a request for it
 * gets, and its run. A pipeline step asked for with `Prefer: respond-async` is one; a scheduled or
 * internal job is one more declaration.
 */
export interface JobDeclaration extends JobKindSpec {
  /**
   * Checks a request as the synchronous call would (404, 403) and returns the job's parameters. A
   * method, so that a check may take the Context its resource's parameters type: the dispatcher calls
   * it with that resource's list request.
   */
  check(ctx: Context): Promise<Record<string, number>>
  /** Runs the job with its requester's rights in its transaction (`ctx.query` holds its parameters); returns its result. */
  run: (ctx: Context) => Promise<unknown>
  /** Its work that needs no transaction, started before it opens (its resource's `prepare`). */
  prepare?: (ctx: Context) => Promise<() => void>
}
