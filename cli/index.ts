// Operator commands: `npm run cli -- <command> …` (README "Command line").
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../lib/config.js'
import { createDatabase } from '../lib/database.js'
import { migrateToLatest } from '../lib/migrations.js'
import { ensureAdmin } from '../lib/bootstrap.js'
import { createApiKey, createUser, revokeKeys } from '../lib/auth.js'
import { loadGeo } from '../lib/geo-loader.js'
import { loadDemoData } from '../lib/demo.js'

const USAGE = `usage: npm run cli -- <command>
  migrate                                         apply pending migrations
  create-user <username> [--superuser] [--email e] [--location <id>]
                                                  create a user and print its first API key
  create-key <username>                           print a new API key for the user
  revoke-key <key> | --user <username>            revoke one key, or every key of a user
  load-geo <file>                                 load location_code|geo_json polygons
  demo                                            load the demo data set into an empty database`

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      superuser: { type: 'boolean', default: false },
      email: { type: 'string' },
      location: { type: 'string' },
      user: { type: 'string' },
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
    const { db } = database
    switch (command) {
      case 'migrate':
        console.log('migrations are up to date')
        return 0
      case 'create-user': {
        if (!arg) throw new Error('create-user needs a username')
        const id = await createUser(db, { username: arg, is_superuser: values.superuser, email: values.email })
        if (values.location) {
          await db.insertInto('location_permission').values({ user_id: id, top_lvl_location_id: Number(values.location) }).execute()
        }
        console.log(`${arg}:${await createApiKey(db, id)}`)
        return 0
      }
      case 'create-key': {
        const user = await db.selectFrom('auth_user').select('id').where('username', '=', arg ?? '').executeTakeFirst()
        if (!user) throw new Error(`no user named ${arg}`)
        console.log(`${arg}:${await createApiKey(db, user.id)}`)
        return 0
      }
      case 'revoke-key': {
        const key = arg?.includes(':') ? arg.slice(arg.lastIndexOf(':') + 1) : arg
        const revoked = await revokeKeys(db, values.user ? { username: values.user } : { key })
        console.log(`${revoked} key(s) revoked`)
        return revoked ? 0 : 1
      }
      case 'load-geo': {
        if (!arg) throw new Error('load-geo needs a file')
        const result = await loadGeo(db, await readFile(arg))
        console.log(`${result.loaded} polygon(s) loaded`)
        if (result.unknown.length) console.log(`unknown location codes skipped: ${result.unknown.join(', ')}`)
        return 0
      }
      case 'demo':
        console.log((await loadDemoData(db)) ? 'demo data loaded' : 'the database already has locations; nothing loaded')
        return 0
      default:
        console.error(USAGE)
        return 2
    }
  } finally {
    await database.close()
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error & { detail?: string }) => {
    console.error(`error: ${error.message}${error.detail ? ` (${error.detail})` : ''}`)
    process.exit(1)
  },
)
