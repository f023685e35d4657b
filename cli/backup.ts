// `backup FILE` and `restore FILE` of the embedded database (lib/data/backup.ts): a backup goes through
// the running server when one holds the data directory, else opens it here; a restore writes into an
// empty data directory only.
import { chmodSync, existsSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '../lib/core/config.js'
import { createDatabase, type Database } from '../lib/data/database.js'
import { DataDirInUseError } from '../lib/data/data-dir-lock.js'
import { restoreInto, snapshot } from '../lib/data/backup.js'
import { authorizationOf, RemoteError, send } from './remote.js'
import { UsageError } from './commands.js'

/** The snapshot from the server at `base` (GET /api/v1/backup/, a superuser's key). */
async function remoteSnapshot(base: string, key: string): Promise<Buffer> {
  const response = await send(new URL('/api/v1/backup/', base), { headers: { authorization: authorizationOf(key) } })
  if (!response.ok) throw new RemoteError(`GET /backup/: ${response.status} ${await response.text()}`)
  return Buffer.from(await response.arrayBuffer())
}

/** The snapshot of `dataDir`: opened here, or through the server that holds it. */
async function takeSnapshot(dataDir: string, superuserKey: () => string, print: (line: string) => void): Promise<Buffer> {
  if (!existsSync(join(dataDir, 'PG_VERSION'))) throw new UsageError(`there is no embedded database in ${dataDir}`)
  let database: Database
  try {
    database = await createDatabase({ dataDir })
  } catch (error) {
    if (!(error instanceof DataDirInUseError) || !error.holder.url) throw error
    print(`the embedded database is held by the server at ${error.holder.url}: the backup is taken there`)
    return remoteSnapshot(error.holder.url, superuserKey())
  }
  try {
    return await snapshot(database)
  } finally {
    await database.close()
  }
}

export async function backupCommand(
  command: 'backup' | 'restore',
  file: string | undefined,
  config: Config,
  options: { server?: string; superuserKey: () => string },
  print: (line: string) => void,
): Promise<number> {
  if (!file) throw new UsageError(`${command} needs a file`)
  if (config.DATABASE_URL) {
    throw new UsageError(`${command} is for the embedded database; a PostgreSQL database is backed up with pg_dump and pg_restore (docs/operations.md)`)
  }
  const dataDir = join(config.DATA_DIR, 'pglite')
  if (command === 'restore') {
    await restoreInto(dataDir, await readFile(file))
    print(`${file} restored into ${dataDir}`)
    return 0
  }
  const bytes = options.server ? await remoteSnapshot(options.server, options.superuserKey()) : await takeSnapshot(dataDir, options.superuserKey, print)
  // Written whole under another name first: an interrupted backup never leaves a file that looks complete.
  const partial = `${file}.partial`
  // 0600: a backup holds every password and key hash. The mode is set at creation and again in case the file was there.
  writeFileSync(partial, bytes, { mode: 0o600 })
  chmodSync(partial, 0o600)
  renameSync(partial, file)
  print(`backup written to ${file} (${(statSync(file).size / 1e6).toFixed(1)} MB)`)
  return 0
}
