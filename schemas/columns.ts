// Column helpers: each returns a TypeBox schema that carries, besides its JSON-Schema constraints,
// the column metadata that the dispatcher, /schema, OpenAPI and the Kysely types are derived from.
// The static type is the Kysely column type, so `Static<typeof Table>` is a Kysely row.
import { Type, type TSchema, type TUnsafe, type TObject, type TProperties } from 'typebox'
import type { ColumnType, Generated } from 'kysely'
import { TIMESTAMP_DESCRIPTION, TIMESTAMP_PATTERN } from '../lib/core/values.js'

/** A timestamp as the API writes it (lib/data/database.ts formatTimestamp). */
export const Timestamp = () => Type.String({ pattern: TIMESTAMP_PATTERN, description: TIMESTAMP_DESCRIPTION })

export type ColumnKind = 'integer' | 'float' | 'string' | 'boolean' | 'date' | 'datetime' | 'json' | 'related'
export type OnDelete = 'restrict' | 'cascade' | 'set null'

export interface ColumnMeta {
  kind: ColumnKind
  nullable: boolean
  readonly: boolean
  primaryKey: boolean
  unique: boolean
  /** Default applied by the database; undefined = none. Shown by /schema. */
  default?: unknown
  /** Target table of a foreign key. */
  references?: string
  onDelete?: OnDelete
  maxLength?: number
  enum?: readonly string[]
  pattern?: string
  /** Derived from a secret (a key's hash): never shown, and filterable by superusers only. */
  secret?: boolean
}

export const COLUMN = 'x-column'

export interface TableMeta {
  name: string
  /** Composite unique constraints, for readable 409 messages. */
  unique?: string[][]
  /**
   * How the database holds the table's references when not by foreign keys: `declared only`, the
   * application's alone (deletes count and cascade through them; sql/005, bulk-written derived
   * tables); `by trigger`, statement-level triggers over the columns of `<table>_references()`
   * (sql/007, datapoint).
   */
  references?: 'declared only' | 'by trigger'
}
export const TABLE = 'x-table'

type Opts = Partial<Omit<ColumnMeta, 'kind'>>

function column<T>(base: TSchema, kind: ColumnKind, opts: Opts = {}): TUnsafe<T> {
  const meta: ColumnMeta = { kind, nullable: false, readonly: false, primaryKey: false, unique: false, ...opts }
  const schema: Record<string, unknown> = { ...base, [COLUMN]: meta }
  if (meta.nullable) schema.nullable = true
  if (meta.readonly) schema.readOnly = true
  if (meta.enum) schema.enum = [...meta.enum]
  if (meta.maxLength !== undefined) schema.maxLength = meta.maxLength
  if (meta.pattern !== undefined) schema.pattern = meta.pattern
  if (meta.default !== undefined) schema.default = meta.default
  return Type.Unsafe<T>(schema)
}

type Nullable<T, O extends Opts> = O extends { nullable: true } ? T | null : T
/** A column the database fills in when omitted (default, serial, now()). */
type Defaulted<T, O extends Opts> = O extends { default: unknown } ? Generated<T> : O extends { readonly: true } ? Generated<T> : T

export const col = {
  id: () => column<Generated<number>>(Type.Integer(), 'integer', { primaryKey: true, unique: true, readonly: true }),
  integer: <O extends Opts>(opts?: O) => column<Defaulted<Nullable<number, O>, O>>(Type.Integer(), 'integer', opts),
  float: <O extends Opts>(opts?: O) => column<Defaulted<Nullable<number, O>, O>>(Type.Number(), 'float', opts),
  string: <O extends Opts>(opts?: O) => column<Defaulted<Nullable<string, O>, O>>(Type.String(), 'string', opts),
  boolean: <O extends Opts>(opts?: O) => column<Defaulted<Nullable<boolean, O>, O>>(Type.Boolean(), 'boolean', opts),
  date: <O extends Opts>(opts?: O) => column<Defaulted<Nullable<string, O>, O>>(Type.String({ format: 'date' }), 'date', opts),
  datetime: <O extends Opts>(opts?: O) => column<Defaulted<Nullable<string, O>, O>>(Timestamp(), 'datetime', opts),
  /** `created_at timestamptz NOT NULL DEFAULT now()`, never written by clients. */
  createdAt: () =>
    column<ColumnType<string, string | undefined, string>>(Timestamp(), 'datetime', {
      readonly: true,
      default: 'now()',
    }),
  json: <O extends Opts>(opts?: O) => column<Defaulted<Nullable<unknown, O>, O>>(Type.Unknown(), 'json', opts),
  /** Foreign key to `table.id`. */
  fk: <O extends Opts>(table: string, opts?: O) =>
    column<Defaulted<Nullable<number, O>, O>>(Type.Integer(), 'related', { onDelete: 'restrict', ...opts, references: table }),
}

export function table<P extends TProperties>(name: string, properties: P, meta: Omit<TableMeta, 'name'> = {}): TObject<P> {
  return Type.Object(properties, { title: name, [TABLE]: { name, ...meta } })
}

/**
 * `schema` with the values of `column` limited to `values`, where the list is declared above the
 * schemas (the kinds of job, resources/jobs.ts): /schema and OpenAPI then show it as an enum.
 */
export function withEnum<P extends TProperties>(schema: TObject<P>, column: keyof P & string, values: readonly string[]): TObject<P> {
  const property = schema.properties[column] as unknown as Record<string, unknown>
  const meta = { ...(property[COLUMN] as ColumnMeta), enum: [...values] }
  const properties = { ...schema.properties, [column]: { ...property, [COLUMN]: meta, enum: [...values] } }
  return { ...schema, properties } as TObject<P>
}

export function columnMeta(schema: TSchema): ColumnMeta {
  const meta = (schema as Record<string, unknown>)[COLUMN] as ColumnMeta | undefined
  if (!meta) throw new Error('schema is not a column')
  return meta
}

export function tableMeta(schema: TObject): TableMeta {
  return (schema as unknown as Record<string, TableMeta>)[TABLE]
}

export function columnsOf(schema: TObject): Record<string, ColumnMeta> {
  return Object.fromEntries(Object.entries(schema.properties).map(([name, s]) => [name, columnMeta(s)]))
}
