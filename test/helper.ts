// Test harness: one real database per test process (PGlite from a migrated template, or a private
// schema on the PostgreSQL server named by DATABASE_URL), reset to the freshly migrated state
// before each scenario, and `build(t)` for an app that closes itself after the test.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { buildApp } from '../app.js'
import type { Config } from '../lib/core/config.js'
import { createDatabase, type Database } from '../lib/data/database.js'
import { migrateToLatest } from '../lib/data/migrations.js'
import { ensureTemplate } from '../lib/data/pglite-template.js'
import { createApiKey, createUser } from '../lib/data/auth.js'
import type { DB } from '../schemas/index.js'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

export const ADMIN_KEY = 'a'.repeat(40)
export const ALICE_KEY = 'b'.repeat(40)
export const admin = { authorization: `ApiKey admin:${ADMIN_KEY}` }
export const alice = { authorization: `ApiKey alice:${ALICE_KEY}` }
export const engine = process.env.DATABASE_URL ? 'postgres' : 'pglite'

let shared: Promise<{ database: Database; seed: Map<string, Record<string, unknown>[]> }> | undefined

async function openDatabase(): Promise<Database> {
  const database = process.env.DATABASE_URL ? await emptyDatabase() : await createDatabase({ loadDataDir: await ensureTemplate() })
  await migrateToLatest(database)
  return database
}

/**
 * A database of its own with nothing in it, not even migrations: PGlite in memory, or on PostgreSQL a
 * schema of its own (test files run in parallel), dropped when it is closed.
 */
export async function emptyDatabase(): Promise<Database> {
  const url = process.env.DATABASE_URL
  if (!url) return createDatabase({})
  const schema = `test_${process.pid}_${randomBytes(3).toString('hex')}`
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(`create schema ${schema}`)
  await client.end()
  const database = await createDatabase({ url, searchPath: schema, poolSize: 5 })
  const close = database.close
  database.close = async () => {
    await close()
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    // The job queue's schema (lib/data/job-queue.ts) goes with it.
    await c.query(`drop schema if exists ${schema}_jobs cascade`)
    await c.query(`drop schema ${schema} cascade`)
    await c.end()
  }
  return database
}

const TABLES_IN_DELETE_ORDER = async (db: Kysely<DB>) => {
  const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables
    where schemaname = current_schema() and tablename not like 'kysely_%'`.execute(db)
  return rows.map((r) => r.name)
}

/** The shared database of this test process, migrated, with a snapshot of the rows migrations seed. */
export function sharedDatabase() {
  shared ??= (async () => {
    const database = await openDatabase()
    const seed = new Map<string, Record<string, unknown>[]>()
    for (const table of await TABLES_IN_DELETE_ORDER(database.db)) {
      const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(database.db)
      if (rows.length) seed.set(table, rows)
    }
    t.teardown(() => database.close())
    return { database, seed }
  })()
  return shared
}

/** Back to the freshly migrated state (acceptance.md §0), plus `admin` (superuser) and `alice`. */
export async function resetDatabase(): Promise<{ database: Database; adminId: number; aliceId: number }> {
  const database = await migratedDatabase()
  const adminId = await createUser(database.db, { username: 'admin', is_superuser: true })
  await createApiKey(database.db, adminId, ADMIN_KEY)
  const aliceId = await createUser(database.db, { username: 'alice' })
  await createApiKey(database.db, aliceId, ALICE_KEY)
  return { database, adminId, aliceId }
}

/** The shared database back to the freshly migrated state: no user, no data, the rows migrations seed. */
export async function migratedDatabase(): Promise<Database> {
  const { database, seed } = await sharedDatabase()
  const { db } = database
  const tables = await TABLES_IN_DELETE_ORDER(db)
  await sql`truncate ${sql.join(tables.map((name) => sql.table(name)))} restart identity cascade`.execute(db)
  for (const [table, rows] of seed) {
    // biome-ignore lint/suspicious/noExplicitAny: tables and columns chosen at run time, checked by the schemas
    await (db as Kysely<any>)
      .insertInto(table)
      .values(rows.map((r) => jsonSafe(r)))
      .execute()
    if ('id' in rows[0]) await resetSequence(db, table)
  }
  return database
}

function jsonSafe(row: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v !== null && typeof v === 'object' ? JSON.stringify(v) : v]))
}

/** After inserts with explicit ids, the serial continues after the largest id. */
export async function resetSequence(db: Kysely<DB>, table: string) {
  await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce((select max(id) from ${sql.table(table)}), 0) + 1, false)`.execute(db)
}

export interface Harness {
  app: Awaited<ReturnType<typeof buildApp>>
  db: Kysely<DB>
  adminId: number
  aliceId: number
  database: Database
}

/** A ready app on a freshly reset database; closed when `test` ends. */
export async function build(
  test: { teardown(fn: () => unknown): void },
  config: Partial<Config> = {},
  /** Runs before the app is ready (a test adds a route of its own). */
  prepare?: (app: Harness['app']) => void,
): Promise<Harness> {
  const { database, adminId, aliceId } = await resetDatabase()
  const app = await buildApp({
    database,
    logger: config.LOG_LEVEL ? { level: config.LOG_LEVEL } : false,
    // Load shedding off unless a test asks for it (test/protection.test.ts): PGlite runs inside this
    // process, so a long statement under a busy parallel run is event-loop lag, and a 503 from it
    // would make unrelated scenarios fail by timing.
    config: { DATA_DIR: join(ROOT, '.data', 'test'), MAX_EVENT_LOOP_DELAY_MS: 0, ...config },
  })
  prepare?.(app)
  await app.ready()
  await app.detection.ready
  test.teardown(() => app.close())
  return { app, db: database.db, adminId, aliceId, database }
}

/** A new temporary directory, removed when `test` ends. */
export function tempDir(test: { teardown(fn: () => unknown): void }, prefix = 'rhizome-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  test.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Polls `probe` until `done` holds (changes made by other processes reach the server through NOTIFY). */
export async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 2000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (done(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Every table's row count, in one statement: "nothing was written" is this, unchanged. */
export async function rowCounts(db: Kysely<DB>): Promise<Record<string, number>> {
  const tables = await TABLES_IN_DELETE_ORDER(db)
  const parts = tables.map((name) => sql`select ${name} as name, count(*)::int as n from ${sql.table(name)}`)
  const { rows } = await sql<{ name: string; n: number }>`${sql.join(parts, sql` union all `)}`.execute(db)
  return Object.fromEntries(rows.map((r) => [r.name, r.n]))
}

/** A transaction that has run `work` and stays open, holding its locks, until `commit()`. */
export async function heldOpen(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<unknown>) {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let worked!: () => void
  const done = new Promise<void>((resolve) => (worked = resolve))
  const transaction = db.transaction().execute(async (trx) => {
    await work(trx)
    worked()
    await released
  })
  await Promise.race([done, transaction])
  return {
    commit: async () => {
      release()
      await transaction
    },
  }
}
