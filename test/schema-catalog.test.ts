// The tables are written twice: in sql/*.sql (what the database has) and in schemas/*.ts (what the
// API validates, documents and types). This test migrates a fresh database and holds every schema
// to the catalog: the tables and their columns, types, nullability, declared defaults, primary and
// unique keys, and references, in both directions. A column added on one side only fails it.
import t from 'tap'
import { sql } from 'kysely'
import { sharedDatabase } from './helper.js'
import { tables } from '../schemas/index.js'
import { columnsOf, tableMeta, type ColumnKind } from '../schemas/columns.js'

/** The catalog types each column kind may have. */
const TYPES: Record<ColumnKind, string[]> = {
  integer: ['integer', 'bigint', 'smallint'],
  related: ['integer', 'bigint'],
  float: ['double precision', 'real'],
  string: ['text', 'character varying', 'character', 'uuid'],
  boolean: ['boolean'],
  date: ['date'],
  datetime: ['timestamp with time zone', 'timestamp without time zone'],
  json: ['jsonb', 'json'],
}
const DELETE_RULE: Record<string, string> = { a: 'restrict', r: 'restrict', c: 'cascade', n: 'set null' }
/** Bookkeeping that no resource serves: Kysely's migration log. */
const UNSERVED = new Set(['kysely_migration', 'kysely_migration_lock'])

interface Catalog {
  relations: Map<string, 'table' | 'view'>
  columns: Map<string, Map<string, { type: string; nullable: boolean; hasDefault: boolean }>>
  /** Per table: each unique index's columns (sorted, joined by ','), and the primary key's. */
  unique: Map<string, Set<string>>
  primary: Map<string, string>
  /** Per table and column: the referenced table and the delete rule. */
  references: Map<string, Map<string, { table: string; onDelete: string }>>
  /** Tables whose references triggers check: `<column> <table>` from `<table>_references()`. */
  triggerReferences: Map<string, string[]>
}

async function readCatalog(): Promise<Catalog> {
  const { database } = await sharedDatabase()
  const db = database.db
  const catalog: Catalog = {
    relations: new Map(),
    columns: new Map(),
    unique: new Map(),
    primary: new Map(),
    references: new Map(),
    triggerReferences: new Map(),
  }
  const relations = await sql<{ name: string; kind: string }>`select c.relname as name, c.relkind as kind from pg_class c
    where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'v', 'p')`.execute(db)
  for (const r of relations.rows) catalog.relations.set(r.name, r.kind === 'v' ? 'view' : 'table')
  const columns = await sql<{ table: string; column: string; type: string; nullable: string; default: string | null }>`
    select table_name as table, column_name as column, data_type as type, is_nullable as nullable, column_default as default
    from information_schema.columns where table_schema = current_schema()`.execute(db)
  for (const c of columns.rows) {
    if (!catalog.columns.has(c.table)) catalog.columns.set(c.table, new Map())
    catalog.columns.get(c.table)!.set(c.column, { type: c.type, nullable: c.nullable === 'YES', hasDefault: c.default !== null })
  }
  const indexes = await sql<{ table: string; primary: boolean; columns: string[] }>`
    select t.relname as table, i.indisprimary as primary,
      array(select a.attname::text from unnest((i.indkey::int2[])[0:i.indnkeyatts - 1]) k join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k) as columns
    from pg_index i join pg_class t on t.oid = i.indrelid
    where t.relnamespace = current_schema()::regnamespace and i.indisunique and i.indpred is null and i.indexprs is null`.execute(db)
  for (const i of indexes.rows) {
    const key = [...i.columns].sort().join(',')
    if (!catalog.unique.has(i.table)) catalog.unique.set(i.table, new Set())
    catalog.unique.get(i.table)!.add(key)
    if (i.primary) catalog.primary.set(i.table, key)
  }
  const foreign = await sql<{ table: string; column: string; target: string; rule: string }>`
    select t.relname as table, a.attname as column, f.relname as target, c.confdeltype as rule
    from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_class f on f.oid = c.confrelid
    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
    where c.contype = 'f' and cardinality(c.conkey) = 1 and t.relnamespace = current_schema()::regnamespace`.execute(db)
  for (const r of foreign.rows) {
    if (!catalog.references.has(r.table)) catalog.references.set(r.table, new Map())
    catalog.references.get(r.table)!.set(r.column, { table: r.target, onDelete: DELETE_RULE[r.rule] ?? r.rule })
  }
  for (const [name, schema] of Object.entries(tables)) {
    if (tableMeta(schema).references !== 'by trigger') continue
    const listed = await sql<{ col: string; tbl: string }>`select * from ${sql.raw(`${name}_references()`)}`.execute(db)
    catalog.triggerReferences.set(name, listed.rows.map((r) => `${r.col} ${r.tbl}`).sort())
  }
  return catalog
}

/** Every difference between the schemas and the catalog, one line each. */
function differences(catalog: Catalog): string[] {
  const found: string[] = []
  for (const name of catalog.relations.keys()) {
    if (!(name in tables) && !UNSERVED.has(name)) found.push(`${name}: in the database, no schema in schemas/index.ts`)
  }
  for (const [name, schema] of Object.entries(tables)) {
    const kind = catalog.relations.get(name)
    if (!kind) {
      found.push(`${name}: a schema, no table or view in the database`)
      continue
    }
    const declared = columnsOf(schema)
    const actual = catalog.columns.get(name) ?? new Map()
    for (const column of actual.keys()) if (!(column in declared)) found.push(`${name}.${column}: in the database, not in the schema`)
    const primary = Object.entries(declared)
      .filter(([, m]) => m.primaryKey)
      .map(([c]) => c)
      .sort()
      .join(',')
    if (kind === 'table' && (catalog.primary.get(name) ?? '') !== primary)
      found.push(`${name}: primary key (${catalog.primary.get(name) ?? ''}) but the schema says (${primary})`)
    for (const [column, meta] of Object.entries(declared)) {
      const db = actual.get(column)
      if (!db) {
        found.push(`${name}.${column}: in the schema, not in the database`)
        continue
      }
      if (!TYPES[meta.kind].includes(db.type)) found.push(`${name}.${column}: ${db.type} in the database, ${meta.kind} in the schema`)
      if (kind === 'view') continue
      if (db.nullable !== meta.nullable)
        found.push(`${name}.${column}: ${db.nullable ? 'nullable' : 'not null'} in the database, ${meta.nullable ? 'nullable' : 'not null'} in the schema`)
      if (meta.default !== undefined && !db.hasDefault) found.push(`${name}.${column}: the schema declares a default, the database has none`)
      const unique = catalog.unique.get(name)?.has(column) ?? false
      if (unique !== meta.unique)
        found.push(`${name}.${column}: ${unique ? 'unique' : 'not unique'} in the database, ${meta.unique ? 'unique' : 'not unique'} in the schema`)
      const reference = catalog.references.get(name)?.get(column)
      const enforced = tableMeta(schema).references === undefined
      if (meta.references && enforced && (!reference || reference.table !== meta.references || reference.onDelete !== meta.onDelete)) {
        found.push(
          `${name}.${column}: references ${meta.references} on delete ${meta.onDelete} in the schema, ${reference ? `${reference.table} on delete ${reference.onDelete}` : 'nothing'} in the database`,
        )
      }
      if (reference && !meta.references) found.push(`${name}.${column}: references ${reference.table} in the database, nothing in the schema`)
    }
    if (tableMeta(schema).references === 'by trigger') {
      const declaredReferences = Object.entries(declared)
        .filter(([, m]) => m.references)
        .map(([c, m]) => `${c} ${m.references}`)
        .sort()
      if (JSON.stringify(catalog.triggerReferences.get(name) ?? []) !== JSON.stringify(declaredReferences)) {
        found.push(
          `${name}: ${name}_references() lists ${(catalog.triggerReferences.get(name) ?? []).join(', ') || 'nothing'}, the schema ${declaredReferences.join(', ')}`,
        )
      }
    }
    for (const composite of tableMeta(schema).unique ?? []) {
      if (!catalog.unique.get(name)?.has([...composite].sort().join(',')))
        found.push(`${name}: the schema's unique (${composite.join(', ')}) is not a unique key in the database`)
    }
  }
  return found
}

t.test('every schema of schemas/index.ts matches the migrated database', async (t) => {
  const catalog = await readCatalog()
  t.ok(catalog.relations.size >= Object.keys(tables).length, `${catalog.relations.size} tables and views read`)
  t.same(differences(catalog), [])
})

t.test('a column added to the database only, or missing from it, is found', async (t) => {
  const { database } = await sharedDatabase()
  await sql`alter table campaign add column pilot boolean`.execute(database.db)
  t.teardown(() => sql`alter table campaign drop column if exists pilot`.execute(database.db))
  t.same(differences(await readCatalog()), ['campaign.pilot: in the database, not in the schema'])
  await sql`alter table campaign drop column pilot`.execute(database.db)
  await sql`alter table campaign rename column end_date to finish_date`.execute(database.db)
  t.teardown(() => sql`alter table campaign rename column finish_date to end_date`.execute(database.db))
  t.same(differences(await readCatalog()), [
    'campaign.finish_date: in the database, not in the schema',
    'campaign.end_date: in the schema, not in the database',
  ])
})
