// Opens the database (PGlite under DATA_DIR, or PostgreSQL with DATABASE_URL) and its read replicas
// (DATABASE_READ_URL), applies the migrations, bootstraps the admin user, and closes them with the app.
import { join } from 'node:path'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { createDatabase, keepPrivate, type Database } from '../lib/data/database.js'
import { migrateToLatest } from '../lib/data/migrations.js'
import { readTemplate } from '../lib/data/pglite-template.js'
import { ensureAdmin } from '../lib/data/bootstrap.js'
import { recomputePending } from '../lib/engine/pending-recomputes.js'
import { ReadReplicas } from '../lib/data/replicas.js'
import { ConfigError, listSetting } from '../lib/core/config.js'

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
    /** The read replicas, when DATABASE_READ_URL names any. */
    replicas?: ReadReplicas
  }
}

export interface DbPluginOptions {
  /** An already open database (tests share one per process). */
  database?: Database
}

/** How long close() waits for running handlers before it closes the database anyway. */
const CLOSE_WAIT_MS = 30_000

/**
 * Requests between their arrival and their answer. close() stops waiting for a connection once its
 * client hangs up, but the handler keeps running and may still need the database: it stays open until
 * every handler has answered (test/graceful.test.ts).
 */
function inFlightRequests(app: FastifyInstance) {
  const running = new Set<FastifyRequest>()
  let wake: (() => void) | undefined
  const answered = (request: FastifyRequest) => {
    if (running.delete(request) && running.size === 0) wake?.()
  }
  // Callback-style hooks: they run on every request, and an async hook costs a promise each time.
  app.addHook('onRequest', (request, _reply, done) => {
    running.add(request)
    done()
  })
  // onSend comes once the handler (or an error) has produced the answer, whether or not anyone is
  // still there to receive it; onResponse covers answers sent without it.
  app.addHook('onSend', (request, _reply, payload, done) => {
    answered(request)
    done(null, payload)
  })
  app.addHook('onResponse', (request, _reply, done) => {
    answered(request)
    done()
  })
  return {
    settled: (timeoutMs: number) =>
      new Promise<void>((resolve) => {
        if (running.size === 0) return resolve()
        const timer = setTimeout(resolve, timeoutMs)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      }),
  }
}

let stepRunning: string | undefined

/** The start-up step begun last (a start that fails names it). */
export const lastStartupStep = () => stepRunning

/** A start-up step ran past STARTUP_TIMEOUT_MS: the process gives up, naming the step. */
export class StartupTimeout extends Error {}

/**
 * Runs a start-up step, saying what it is doing and how long it took (a slow start shows where it
 * waits), and gives up on it after STARTUP_TIMEOUT_MS: a step that hangs stops the start with its name
 * instead of leaving a process that never listens and says nothing.
 */
export function startupSteps(app: Pick<FastifyInstance, 'log' | 'config'>) {
  return async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    stepRunning = what
    app.log.info(`${what}…`)
    const started = performance.now()
    const limit = app.config.STARTUP_TIMEOUT_MS
    let timer: NodeJS.Timeout | undefined
    const givenUp = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StartupTimeout(`${what}: not done after ${limit} ms (STARTUP_TIMEOUT_MS); the start gives up`)), limit)
    })
    try {
      const result = await Promise.race([work(), givenUp])
      app.log.info({ ms: Math.round(performance.now() - started) }, `${what}: done`)
      return result
    } finally {
      clearTimeout(timer)
    }
  }
}

export default fp<DbPluginOptions>(
  async function db(app: FastifyInstance, options) {
    const { config } = app
    const step = startupSteps(app)
    // Created 0700; one made wider (by hand, or by a version before this rule) is narrowed, and said so.
    const dataDirs = options.database ? [] : config.DATABASE_URL ? [config.DATA_DIR] : [config.DATA_DIR, join(config.DATA_DIR, 'pglite')]
    for (const dir of dataDirs) {
      if (keepPrivate(dir)) app.log.warn({ dir }, 'the data directory was readable by others: narrowed to 0700 (this user only)')
    }
    const database =
      options.database ??
      (await step(config.DATABASE_URL ? 'connecting to PostgreSQL' : `opening the embedded database in ${join(config.DATA_DIR, 'pglite')}`, () =>
        createDatabase(
          config.DATABASE_URL
            ? { url: config.DATABASE_URL, hangMs: config.DATABASE_HANG_MS, lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS, log: app.log }
            : { dataDir: join(config.DATA_DIR, 'pglite'), template: readTemplate, socketDir: config.DATA_DIR },
        ),
      ))
    const handling = inFlightRequests(app)
    if (!options.database) {
      const applied = await step('applying migrations', () => migrateToLatest(database))
      if (applied.length) app.log.info({ applied }, 'migrations applied')
      // Campaigns computed under an earlier rule of the engine (sql/023), recomputed once, whole.
      const recomputed = await step('recomputing campaigns under the current rules', () => recomputePending(database.db))
      if (recomputed) app.log.info({ recomputed }, 'campaigns recomputed under the current rules')
      // The new key is printed once on stdout (resource-api §5), never as a log record: logs are
      // shipped and kept, and must not hold credentials.
      await step('making sure a superuser exists', () => ensureAdmin(database.db, config, (line) => process.stdout.write(`${line}\n`)))
    }
    const readUrls = listSetting(config.DATABASE_READ_URL ?? 'none')
    if (readUrls.length && database.engine !== 'postgres') throw new ConfigError('DATABASE_READ_URL needs DATABASE_URL: replicas follow a PostgreSQL primary')
    const replicas = readUrls.length
      ? await step(`connecting to ${readUrls.length} read replica(s)`, () =>
          ReadReplicas.open(database, readUrls, { maxLagMs: config.REPLICA_MAX_LAG_MS, checkMs: config.REPLICA_CHECK_MS }),
        )
      : undefined
    if (replicas) {
      // A change anywhere moves the point a replica must have replayed before the detail cache keeps its rows.
      const unlisten = await database.listen(
        'rhizome_data',
        () => replicas.changed(),
        () => replicas.changed(),
      )
      app.addHook('onClose', () => unlisten())
    }
    app.addHook('onClose', async () => {
      await handling.settled(CLOSE_WAIT_MS)
      await replicas?.close()
      if (!options.database) await database.close()
    })
    app.decorate('db', database)
    app.decorate('replicas', replicas)
  },
  { name: 'db' },
)
