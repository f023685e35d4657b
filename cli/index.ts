// `npm run cli -- <command> …`: opens the configured database (migrating it), runs one command.
import { join } from 'node:path'
import { CommanderError } from 'commander'
import { readFileSync } from 'node:fs'
import { ConfigError, loadConfig, type Config } from '../lib/core/config.js'
import { createDatabase, type Database } from '../lib/data/database.js'
import { DataDirInUseError } from '../lib/data/data-dir-lock.js'
import { REMOTE_COMMANDS, runRemote } from './remote.js'
import { backupCommand } from './backup.js'
import { upgradeDataDir } from '../lib/data/pglite-upgrade.js'
import { readSecret } from './read-secret.js'
import { migrateToLatest } from '../lib/data/migrations.js'
import { readTemplate } from '../lib/data/pglite-template.js'
import { ensureAdmin } from '../lib/data/bootstrap.js'
import { type Options, runCommand, UsageError } from './commands.js'
import { type Invocation, program } from './program.js'

/** Runs one command; its exit code. */
async function main({ command, arg, options: given }: Invocation): Promise<number> {
  const values = given as Options & { server?: string; key?: string }
  const config = loadConfig()
  const options = {
    ...values,
    ...(command === 'set-password' ? { password: await readSecret(`new password for ${arg ?? '?'}: `) } : {}),
  }
  if (command === 'upgrade-data-dir') {
    if (config.DATABASE_URL) throw new UsageError('upgrade-data-dir is for the embedded database; PostgreSQL upgrades with pg_upgrade or pg_dump')
    const copied = await upgradeDataDir(join(config.DATA_DIR, 'pglite'), console.log)
    if (copied === undefined) console.log(`${join(config.DATA_DIR, 'pglite')} is already this version's: nothing to do`)
    return 0
  }
  if (command === 'backup' || command === 'restore') {
    return backupCommand(command, arg, config, { server: values.server, superuserKey: () => superuserKey(config, values.key) }, console.log)
  }
  const remote = (url: string) => runRemote(url, superuserKey(config, values.key), command, arg, options, console.log)
  if (values.server) return remote(values.server)
  let database: Database
  try {
    database = await createDatabase(config.DATABASE_URL ? { url: config.DATABASE_URL } : { dataDir: join(config.DATA_DIR, 'pglite'), template: readTemplate })
  } catch (error) {
    // A running server holds the embedded database: the command goes through its API instead.
    if (!(error instanceof DataDirInUseError) || !error.holder.url) throw error
    // Said only of what the server takes (runRemote says why the others wait for it to stop).
    if (REMOTE_COMMANDS.includes(command)) console.error(`the embedded database is held by the server at ${error.holder.url}: sending ${command} there`)
    return remote(error.holder.url)
  }
  try {
    await migrateToLatest(database)
    await ensureAdmin(database.db, config, console.log)
    return await runCommand(database.db, command, arg, options, console.log, config, database)
  } finally {
    await database.close()
  }
}

/** A superuser's key for the API: --key, RHIZOME_API_KEY, or the admin key file of the first start. */
function superuserKey(config: Config, given: string | undefined): string {
  const key = given ?? process.env.RHIZOME_API_KEY
  if (key) return key
  try {
    return readFileSync(join(config.DATA_DIR, 'admin-api-key'), 'utf8').trim()
  } catch {
    throw new UsageError(
      `no superuser key to talk to the server: give --key <user>:<key> or RHIZOME_API_KEY (${join(config.DATA_DIR, 'admin-api-key')} is absent)`,
    )
  }
}

let code = 0
try {
  await program(async (invocation) => {
    code = await main(invocation)
  }).parseAsync(process.argv.slice(2), { from: 'user' })
} catch (error) {
  // commander has said what was wrong (on stderr) or printed the help asked for (on stdout).
  if (error instanceof CommanderError) code = error.exitCode === 0 ? 0 : 2
  else {
    const { message, detail } = error as Error & { detail?: string }
    console.error(`error: ${message}${detail ? ` (${detail})` : ''}`)
    if (error instanceof UsageError) console.error('(npm run cli -- --help lists the commands and their options)')
    code = error instanceof UsageError || error instanceof ConfigError ? 2 : 1
  }
}
process.exit(code)
