// `npm run cli -- <command> …`: opens the configured database (migrating it), runs one command.
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../lib/config.js'
import { createDatabase } from '../lib/database.js'
import { migrateToLatest } from '../lib/migrations.js'
import { ensureAdmin } from '../lib/bootstrap.js'
import { runCommand, USAGE, UsageError } from './commands.js'

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      superuser: { type: 'boolean', default: false },
      email: { type: 'string' },
      location: { type: 'string' },
      user: { type: 'string' },
      type: { type: 'string' },
      map: { type: 'string' },
      'date-order': { type: 'string' },
    },
  })
  const [command, arg] = positionals
  if (!command) {
    console.error(USAGE)
    return 2
  }
  const config = loadConfig()
  const database = await createDatabase(
    config.DATABASE_URL ? { url: config.DATABASE_URL } : { dataDir: join(config.DATA_DIR, 'pglite') },
  )
  try {
    await migrateToLatest(database)
    await ensureAdmin(database.db, config, console.log)
    return await runCommand(database.db, command, arg, { ...values, dateOrder: values['date-order'] }, console.log, config)
  } finally {
    await database.close()
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error & { detail?: string }) => {
    console.error(`error: ${error.message}${error.detail ? ` (${error.detail})` : ''}`)
    if (error instanceof UsageError) console.error(USAGE)
    process.exit(error instanceof UsageError ? 2 : 1)
  },
)
