// The upgrade of an embedded database written by an earlier PGlite, whose PostgreSQL major version this
// one cannot open (`npm run cli -- upgrade-data-dir`). PostgreSQL keeps no on-disk compatibility between
// majors, and pg_upgrade does not exist for PGlite, so the rows travel: the old directory is opened by
// the PGlite that wrote it (the dependency pglite-pg17) and migrated to this version's schema, a new one
// is made from the migrated template, and every table of the data schema and the job queue is copied
// over (COPY), sequences included. The old directory is kept beside the new one, renamed.
import { existsSync, renameSync, rmSync } from 'node:fs'
import type { PGlite } from '@electric-sql/pglite'
import { CompiledQuery, sql } from 'kysely'
import { PGlite as PGlite17 } from 'pglite-pg17'
import { PGLITE_POSTGRES_MAJOR, createDatabase, dataDirPostgresMajor, type Database } from './database.js'
import { CopyRows } from './copy.js'
import { jobsSchemaOf } from './job-queue.js'
import { migrateToLatest } from './migrations.js'
import { readTemplate } from './pglite-template.js'

export class UpgradeRefused extends Error {
  override name = 'UpgradeRefused'
}

/**
 * The engines an older data directory can be read with, by its PostgreSQL major version. Their classes
 * differ in private members only; what is called here (create, query, exec, transaction) is the same.
 */
const READERS: Record<string, typeof PGlite> = { '17': PGlite17 as unknown as typeof PGlite }

interface Table {
  schema: string
  name: string
  columns: string[]
}

/**
 * The tables to copy: the data schema's and the job queue's, each with its writable columns. Leaf
 * tables only (relkind 'r'): the job queue's partitioned table is copied through its partitions.
 */
async function tablesOf(database: Database): Promise<Table[]> {
  const schemas = ['public', jobsSchemaOf(database)]
  const { rows } = await sql<{ schema: string; name: string; columns: string[] }>`
    select n.nspname as schema, c.relname as name, array_agg(a.attname::text order by a.attnum) as columns
    from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_attribute a on a.attrelid = c.oid
    where c.relkind = 'r' and n.nspname in (${sql.join(schemas)}) and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
    group by 1, 2 order by 1, 2`.execute(database.db)
  return rows
}

const quoted = (table: Table) => `"${table.schema}"."${table.name}"`
const columnList = (table: Table) => table.columns.map((c) => `"${c}"`).join(', ')

/**
 * Upgrades the data directory at `dataDir` in place (its old files kept as `<dataDir>-pg<major>`);
 * returns the number of rows copied, or undefined when it already is this version's.
 */
export async function upgradeDataDir(dataDir: string, log: (line: string) => void): Promise<number | undefined> {
  const major = dataDirPostgresMajor(dataDir)
  if (!major) throw new UpgradeRefused(`${dataDir} holds no database`)
  if (major === PGLITE_POSTGRES_MAJOR) return undefined
  const reader = READERS[major]
  if (!reader) throw new UpgradeRefused(`${dataDir} holds a PostgreSQL ${major} database; this version upgrades from ${Object.keys(READERS).join(', ')} only`)
  const kept = `${dataDir}-pg${major}`
  const fresh = `${dataDir}.upgrading`
  if (existsSync(kept)) throw new UpgradeRefused(`${kept} exists already: move it away first`)
  rmSync(fresh, { recursive: true, force: true })

  const old = await createDatabase({ dataDir, engine: reader })
  let target: Database | undefined
  let copied = 0
  try {
    log(`${dataDir}: PostgreSQL ${major}; bringing its schema up to this version's`)
    await migrateToLatest(old)
    target = await createDatabase({ dataDir: fresh, template: readTemplate })
    await migrateToLatest(target)
    copied = await copyRows(old, target, log)
  } catch (error) {
    await target?.close().catch(() => {})
    target = undefined
    rmSync(fresh, { recursive: true, force: true })
    throw error
  } finally {
    await old.close()
    await target?.close()
  }
  renameSync(dataDir, kept)
  renameSync(fresh, dataDir)
  log(`${copied} rows copied into a PostgreSQL ${PGLITE_POSTGRES_MAJOR} database at ${dataDir}; the old one is at ${kept}`)
  return copied
}

/** Every row of every table, and every sequence's position, from `old` into `target` (empty of its seeds first). */
async function copyRows(old: Database, target: Database, log: (line: string) => void): Promise<number> {
  const tables = await tablesOf(old)
  const inTarget = new Set((await tablesOf(target)).map(quoted))
  const missing = tables.filter((t) => !inTarget.has(quoted(t)))
  if (missing.length) throw new UpgradeRefused(`tables this version does not have: ${missing.map(quoted).join(', ')}`)
  let copied = 0
  const reader = old.pglite!
  await target.db.transaction().execute(async (trx) => {
    // Rows arrive in any order: foreign keys and triggers are not run for them (they held in the old database).
    await sql`set local session_replication_role = replica`.execute(trx)
    await sql.raw(`truncate ${tables.map(quoted).join(', ')}`).execute(trx)
    for (const table of tables) {
      const out = await reader.query(`copy ${quoted(table)} (${columnList(table)}) to '/dev/blob'`)
      if (!out.blob) continue
      const rows = new CopyRows([await out.blob.text()])
      const result = await trx.executeQuery<{ copied: number }>(CompiledQuery.raw(`copy ${quoted(table)} (${columnList(table)}) from stdin`, [rows]))
      copied += result.rows[0]?.copied ?? 0
    }
    const { rows } = await reader.query<{ name: string; value: string | null; called: boolean }>(
      `select format('%I.%I', schemaname, sequencename) as name, last_value::text as value, last_value is not null as called from pg_sequences
       where schemaname in ('public', '${jobsSchemaOf(old)}')`,
    )
    for (const sequence of rows) {
      if (sequence.value !== null) await sql`select setval(${sequence.name}::regclass, ${sequence.value}::bigint, true)`.execute(trx)
    }
  })
  log(`${tables.length} tables copied`)
  return copied
}
