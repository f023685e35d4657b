// Plain-SQL migrations from sql/NNN_name.sql, applied in order by Kysely's Migrator, which records
// them in kysely_migration and holds a lock so concurrent starts do not race.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Migrator, sql, type DatabaseIntrospector, type Kysely, type Migration, type MigrationProvider } from 'kysely'
import type { Database } from './database.js'
import { installJobQueue } from './job-queue.js'
import { inTurn } from './turns.js'

import { PROJECT_ROOT } from '../core/paths.js'

export const SQL_DIR = `${join(PROJECT_ROOT, 'sql')}/`

/** The migration files, in order: read once per process (readiness asks for them on every probe). */
let files: Promise<string[]> | undefined
const migrationFiles = () => (files ??= readdir(SQL_DIR).then((names) => names.filter((f) => /^\d+_.+\.sql$/.test(f)).sort()))

class SqlFileMigrationProvider implements MigrationProvider {
  constructor(private readonly database: Database) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const migrations: Record<string, Migration> = {}
    for (const file of await migrationFiles()) {
      const script = await readFile(SQL_DIR + file, 'utf8')
      migrations[file.replace(/\.sql$/, '')] = {
        up: (db: Kysely<unknown>) => this.database.execScript(db, script),
      }
    }
    return migrations
  }
}

/** The migration files not recorded as applied (all of them before the first). One query, no lock. */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const names = (await migrationFiles()).map((f) => f.replace(/\.sql$/, ''))
  let applied: Set<string>
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(database.db)
    applied = new Set(rows.map((r) => r.name))
  } catch (error) {
    if ((error as { code?: string }).code !== '42P01') throw error // anything but "no bookkeeping table yet"
    applied = new Set()
  }
  return names.filter((name) => !applied.has(name))
}

/**
 * Applies every pending migration, and installs the job queue; returns the names applied now. On
 * PostgreSQL, servers starting at once (several processes, several machines) take turns: the first
 * migrates, the others then find nothing to do. The Migrator's own lock does not cover the very first
 * start, when its bookkeeping tables are being created.
 */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrate = async () => {
    const applied = await applyMigrations(database)
    await installJobQueue(database)
    return applied
  }
  return inTurn(database, MIGRATION_LOCK, migrate)
}

const MIGRATION_LOCK = 'migrations'

async function applyMigrations(database: Database): Promise<string[]> {
  // A restart's usual case: nothing to apply, and no need for the Migrator's lock.
  if (!(await pendingMigrations(database)).length) return []
  // The bookkeeping tables live in the working schema. Left to itself the Migrator looks for them in
  // any schema on the search path's server, and a second schema holding them would hide the first.
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)
  const migrator = new Migrator({
    db: withTablesOfSchema(database.db, rows[0].schema),
    provider: new SqlFileMigrationProvider(database),
    migrationTableSchema: rows[0].schema,
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/**
 * The database as the Migrator sees it, its introspection limited to one schema's tables (the Migrator
 * only asks whether its bookkeeping tables exist). Kysely's own introspection reads every table of the
 * server's database with their columns, and fails when another schema's table is dropped meanwhile
 * (pg-boss's queue tables, another application's schema).
 */
function withTablesOfSchema<T>(db: Kysely<T>, schema: string): Kysely<T> {
  const introspection: DatabaseIntrospector = {
    getSchemas: () => db.introspection.getSchemas(),
    getMetadata: () => db.introspection.getMetadata(),
    getTables: async () => {
      const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = ${schema}`.execute(db)
      return rows.map((r) => ({ name: r.name, schema, isView: false, columns: [] }))
    },
  }
  return new Proxy(db, {
    get(target, key) {
      if (key === 'introspection') return introspection
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
