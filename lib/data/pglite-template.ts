// A migrated, empty PGlite data directory, dumped once per set of migrations: a new embedded database
// starts from it instead of running initdb and every migration (2.6 s of a first start here, against
// 0.8 s to unpack it). Made by `npm install` (cli/prepare.mjs) and by the test harness; a start that
// finds none creates its database the long way.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PROJECT_ROOT } from '../core/paths.js'
import { SQL_DIR, migrateToLatest } from './migrations.js'
import { createDatabase } from './database.js'

const CACHE_DIR = join(PROJECT_ROOT, 'node_modules', '.cache', 'rhizome')

/** The template's file for the current migrations and PGlite (it may not exist yet). */
export function templateFile(): string {
  const hash = createHash('sha1')
  // A template is a data directory: a PGlite of another version may not open it.
  hash.update(readFileSync(join(PROJECT_ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json')))
  for (const file of readdirSync(SQL_DIR).sort()) hash.update(file).update(readFileSync(join(SQL_DIR, file)))
  return join(CACHE_DIR, `pglite-${hash.digest('hex').slice(0, 12)}.tar`)
}

/** The template as a Blob, or undefined when none has been made for these migrations. */
export function readTemplate(): Blob | undefined {
  const file = templateFile()
  return existsSync(file) ? new Blob([readFileSync(file)]) : undefined
}

/** Makes the template if it is missing (written under another name first: concurrent makers do not clash). */
export async function ensureTemplate(): Promise<Blob> {
  const existing = readTemplate()
  if (existing) return existing
  const database = await createDatabase({})
  await migrateToLatest(database)
  const blob = await database.embedded!.dump('none')
  await database.close()
  const file = templateFile()
  mkdirSync(CACHE_DIR, { recursive: true })
  const tmp = `${file}.${process.pid}`
  writeFileSync(tmp, Buffer.from(await blob.arrayBuffer()))
  renameSync(tmp, file)
  return blob
}
