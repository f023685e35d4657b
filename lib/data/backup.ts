// Backup and restore of the embedded database (docs/operations.md): a snapshot is PGlite's data
// directory as one tar file, taken while no statement runs; a restore unpacks one into an empty data
// directory. PostgreSQL has its own tools for both (pg_dump, base backups), also in docs/operations.md.
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { sql } from 'kysely'
import { createDatabase, type Database } from './database.js'

export class RestoreRefused extends Error {
  override name = 'RestoreRefused'
}

/**
 * The data directory of `database` (PGlite) as a tar file. It holds the one connection the process
 * has (every statement of the server, its jobs included, waits), checkpoints, so every committed change
 * is in the data files, and copies them: a snapshot of one moment.
 */
export async function snapshot(database: Database): Promise<Buffer> {
  const { embedded } = database
  if (!embedded) throw new Error('a snapshot is of the embedded database; PostgreSQL is backed up with pg_dump (docs/operations.md)')
  return Buffer.from(await (await embedded.dump('none')).arrayBuffer())
}

/** Unpacks snapshot `bytes` into `dataDir`, which must be empty or absent; nothing is left there when it fails. */
export async function restoreInto(dataDir: string, bytes: Buffer): Promise<void> {
  const existed = existsSync(dataDir)
  if (existed && readdirSync(dataDir).length) {
    throw new RestoreRefused(`${dataDir} is not empty: a restore only writes into an empty data directory (move this one away first)`)
  }
  let database: Database | undefined
  try {
    database = await createDatabase({ dataDir, loadDataDir: new Blob([new Uint8Array(bytes)]) })
    await sql`select count(*) from kysely_migration`.execute(database.db)
  } catch (error) {
    await database?.close().catch(() => {})
    database = undefined
    rmSync(dataDir, { recursive: true, force: true })
    throw new RestoreRefused(`the file is not a backup of an embedded rhizome-api database (${(error as Error).message})`)
  } finally {
    await database?.close()
  }
}
