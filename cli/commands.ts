// The operator commands, separate from process handling so tests can run them on any database.
import { readFile } from 'node:fs/promises'
import type { Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import { createApiKey, createUser, revokeKeys } from '../lib/data/auth.js'
import { loadGeo } from '../lib/engine/geo-loader.js'
import { setPassword } from '../lib/data/passwords.js'
import { loadDemoData } from '../lib/engine/demo.js'
import { loadConfig, type Config } from '../lib/core/config.js'
import { uploadCommand } from './upload.js'
import type { Database } from '../lib/data/database.js'
import { AUTH_CHANNEL } from '../lib/data/auth.js'

/** How long revoke-key waits for the running servers to confirm they dropped the key. */
const REVOKE_CONFIRM_MS = 5_000

export interface Options {
  type?: string
  map?: string
  dateOrder?: string
  /** Two different values for one cell in the file: last (default), first or reject. */
  conflict?: string
  /** A CSV's text encoding: utf-8 (default) or windows-1252. */
  encoding?: string
  superuser?: boolean
  email?: string
  location?: string
  user?: string
  /** set-password's password, read from stdin or a prompt (cli/read-secret.ts), never from argv. */
  password?: string
}

/** The key of `revoke-key`'s argument, given alone or as printed (`user:key`). */
export const keyOf = (arg: string | undefined) => (arg?.includes(':') ? arg.slice(arg.lastIndexOf(':') + 1) : arg)

export class UsageError extends Error {
  override name = 'UsageError'
}

/** Runs one command; returns the process exit code. Output lines go to `print`. */
export async function runCommand(
  db: Kysely<DB>,
  command: string,
  arg: string | undefined,
  options: Options,
  print: (line: string) => void,
  config: Config = loadConfig(),
  /** The database `db` belongs to: revoke-key waits on it for every server to drop the key. */
  database?: Pick<Database, 'confirmHeard'>,
): Promise<number> {
  switch (command) {
    case 'upload':
      if (!arg) throw new UsageError('upload needs a file')
      await uploadCommand(db, config, arg, options, print)
      return 0
    case 'migrate':
      print('migrations are up to date')
      return 0
    case 'create-user': {
      if (!arg) throw new UsageError('create-user needs a username')
      const key = await db.transaction().execute(async (trx) => {
        const id = await createUser(trx, { username: arg, is_superuser: options.superuser, email: options.email })
        if (options.location) {
          await trx
            .insertInto('location_permission')
            .values({ user_id: id, top_lvl_location_id: Number(options.location) })
            .execute()
        }
        return createApiKey(trx, id)
      })
      print(`${arg}:${key}`)
      return 0
    }
    case 'create-key': {
      const user = await db
        .selectFrom('auth_user')
        .select('id')
        .where('username', '=', arg ?? '')
        .executeTakeFirst()
      if (!user) throw new UsageError(`no user named ${arg}`)
      print(`${arg}:${await createApiKey(db, user.id)}`)
      return 0
    }
    case 'set-password': {
      if (!arg) throw new UsageError('set-password needs a username')
      if (!(await setPassword(db, arg, options.password ?? ''))) throw new UsageError(`no user named ${arg}`)
      print(`password set for ${arg}; their sessions ended`)
      return 0
    }
    case 'revoke-key': {
      const key = keyOf(arg)
      if (!key && !options.user) throw new UsageError('revoke-key needs a key or --user <username>')
      const revoked = await revokeKeys(db, options.user ? { username: options.user } : { key })
      if (!revoked) {
        print('0 key(s) revoked')
        return 1
      }
      // Success is reported once every running server has dropped the key from its cache.
      const unconfirmed = (await database?.confirmHeard(AUTH_CHANNEL, REVOKE_CONFIRM_MS)) ?? []
      if (unconfirmed.length) {
        print(
          `${revoked} key(s) revoked; ${unconfirmed.length} server process(es) did not confirm within ${REVOKE_CONFIRM_MS / 1000} s: they refuse the key within 10 s at the latest (their cache's lifetime)`,
        )
        return 2
      }
      print(`${revoked} key(s) revoked`)
      return 0
    }
    case 'load-geo': {
      if (!arg) throw new UsageError('load-geo needs a file')
      const result = await loadGeo(db, await readFile(arg))
      print(`${result.loaded} polygon(s) loaded`)
      if (result.unknown.length) print(`unknown location codes skipped: ${result.unknown.join(', ')}`)
      // A file that loads nothing is a mistake (wrong file, wrong codes): said by the exit code too.
      return result.loaded ? 0 : 1
    }
    case 'demo':
      print((await loadDemoData(db)) ? 'demo data loaded' : 'the database already has locations; nothing loaded')
      return 0
  }
  throw new UsageError(`unknown command ${command}`)
}
