// The data layer: one Kysely instance over either an embedded PGlite database (no DATABASE_URL) or a
// PostgreSQL server (DATABASE_URL). Both speak the same SQL; only construction differs.
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect, sql, type LogEvent, type QueryExecutorProvider } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import pg from 'pg'
import type { DB } from '../../schemas/index.js'
import { lockDataDir, type DataDirLock } from './data-dir-lock.js'
import { carriesCopy, copyingPGlite, copyWithPg } from './copy.js'
import { type ConfirmOptions, Confirmations, listenWithReconnect, scopeOf } from './notifications.js'
import { dbQueryDuration, poolReaders } from '../core/metrics.js'
import { PGliteThread } from './pglite-thread.js'
import { meansPrimaryLost, WritableHost } from './writable-host.js'
import { HangGuard } from './hang-guard.js'

export type Engine = 'pglite' | 'postgres'

export interface Database {
  db: Kysely<DB>
  engine: Engine
  /** Runs a multi-statement SQL script (migrations, test resets) on `executor`'s session. */
  execScript(executor: QueryExecutorProvider, script: string): Promise<void>
  close(): Promise<void>
  /**
   * Calls `onNotify` with the payload of every NOTIFY on `channel`, and `onState(false)` whenever delivery may have gaps
   * (the listening connection broke; it reconnects by itself), `onState(true)` once it listens again.
   * Returns a function that stops listening.
   */
  listen(channel: string, onNotify: (payload: string) => void, onState: (listening: boolean) => void): Promise<() => Promise<void>>
  /**
   * Waits until every process listening on `channel` in this schema has handled the notifications
   * sent before this call (a revoked key dropped from every server's cache), at most `timeoutMs`.
   * Returns the listeners that did not confirm in time (none: all did). PGlite's listeners are in this
   * process: none.
   */
  confirmHeard(channel: string, timeoutMs: number, options?: ConfirmOptions): Promise<string[]>
  /** The embedded database's thread, when engine is pglite: its dumps, whether it is at work now. */
  embedded?: PGliteThread
  /** An older data directory opened in this process by the PGlite that wrote it (the upgrade reads it). */
  pglite?: PGlite
  /** PostgreSQL: the host taking writes, among DATABASE_URL's (lib/data/writable-host.ts). */
  writable?: WritableHost
  /** Several hosts: another one, for reads that find no primary while a failover is under way. */
  standby?: Kysely<DB>
  /** PostgreSQL: the primary through a pool of its own for the API's GETs (READ_POOL_SIZE connections). */
  reads?: Kysely<DB>
  /** An embedded database's data directory lock (lib/data/data-dir-lock.ts); absent in memory and on PostgreSQL. */
  lock?: DataDirLock
  /** PostgreSQL: the schema worked in, when not the server's default (tests). */
  searchPath?: string
  /** PostgreSQL watched for hangs (`hangMs` given): whether the host in use is taken as hung now. */
  hung?: () => boolean
  /** PostgreSQL: how long a request's write waits for a lock (lib/api/transactions.ts); absent: as long as it must. */
  lockTimeoutMs?: number
}

/** Where the database's own troubles are told (the server's log). */
export interface DatabaseLog {
  warn(details: object, message: string): void
  info(details: object, message: string): void
}

export interface DatabaseOptions {
  /** postgres://… ; absent = PGlite. */
  url?: string
  /** PGlite data directory; absent = in memory. */
  dataDir?: string
  /** PGlite: start from a dumped data directory (tests use a migrated template). */
  loadDataDir?: Blob
  /** PGlite: the dumped data directory a new `dataDir` starts from, if any (lib/data/pglite-template.ts). */
  template?: () => Blob | undefined
  /** PostgreSQL: the schema to work in (tests isolate each process in its own schema). */
  searchPath?: string
  poolSize?: number
  /** PGlite: the engine to open it with (the upgrade of an older data directory opens it with the PGlite that wrote it, in this thread). */
  engine?: typeof PGlite
  /** PGlite: the directory its socket goes in (the server's DATA_DIR); absent: a private temporary one. */
  socketDir?: string
  /** PostgreSQL: a host that answers no ping within this is hung (lib/data/hang-guard.ts); absent: not watched (the CLI, tests). */
  hangMs?: number
  /** PostgreSQL: a request's transaction waits at most this for a lock (0: no limit). */
  lockTimeoutMs?: number
  /** Lost connections and hangs are told here; absent: they are only survived. */
  log?: DatabaseLog
}

/** The PostgreSQL major version this PGlite runs; a data directory of another cannot be opened by it. */
export const PGLITE_POSTGRES_MAJOR = '18'

export class DataDirTooOld extends Error {
  override name = 'DataDirTooOld'
  constructor(
    readonly dataDir: string,
    readonly postgresMajor: string,
  ) {
    super(
      `${dataDir} holds a PostgreSQL ${postgresMajor} database, written by an earlier rhizome-api (PGlite 0.4); this version runs ` +
        `PostgreSQL ${PGLITE_POSTGRES_MAJOR} and cannot open it. Upgrade it once with \`npm run cli -- upgrade-data-dir\` ` +
        `(it copies every row into a new directory and keeps the old one beside it as ${basename(dataDir)}-pg${postgresMajor}), then start again`,
    )
  }
}

/** The PostgreSQL major version of the data directory at `dataDir`, or undefined when there is none yet. */
export function dataDirPostgresMajor(dataDir: string): string | undefined {
  const file = join(dataDir, 'PG_VERSION')
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined
}

// Values leave the database already in the API's formats (resource-api "Value formats"):
// dates stay `YYYY-MM-DD`, timestamps become ISO 8601 in UTC with the original's microseconds and no
// zone designator (`YYYY-MM-DDTHH:MM:SS.ffffff`, the seed's form, docs/decisions.md), int8 becomes a number.
const OID = { int8: 20, date: 1082, timestamp: 1114, timestamptz: 1184 } as const

export function formatTimestamp(text: string): string {
  // PostgreSQL text output in TimeZone UTC: `2016-05-04 02:31:29.227679+00` (fraction may be shorter).
  const m = /^(\d{4,}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d+))?/.exec(text)
  if (!m) return text
  return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0').slice(0, 6)}`
}

const identity = (value: string) => value
const parsers: Record<number, (value: string) => unknown> = {
  [OID.int8]: (value) => Number(value),
  [OID.date]: identity,
  [OID.timestamp]: formatTimestamp,
  [OID.timestamptz]: formatTimestamp,
}

/** Kysely's log hook as a histogram of statement times (`rhizome_db_query_duration_seconds`). */
function queryTimer(engine: 'pglite' | 'postgres'): (event: LogEvent) => void {
  const observe = dbQueryDuration.labels(engine)
  return (event) => observe.observe(event.queryDurationMillis / 1000)
}

/**
 * Creates `dir` readable by this user alone (0700), or narrows it to that: the data directory holds the
 * database (every password and key hash) and the uploaded files. Returns whether it had been wider.
 */
export function keepPrivate(dir: string): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  if ((statSync(dir).mode & 0o077) === 0) return false
  chmodSync(dir, 0o700)
  return true
}

export async function createDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? createPostgres(options.url, options) : createPGlite(options)
}

async function createPGlite(options: DatabaseOptions): Promise<Database> {
  const { dataDir } = options
  let lock: DataDirLock | undefined
  let loadDataDir = options.loadDataDir
  if (dataDir) {
    keepPrivate(dirname(dataDir))
    const major = dataDirPostgresMajor(dataDir)
    if (!options.engine && major && major !== PGLITE_POSTGRES_MAJOR) throw new DataDirTooOld(dataDir, major)
    lock = lockDataDir(dataDir)
    // A new data directory starts from the migrated template when there is one (lib/data/pglite-template.ts).
    if (!loadDataDir && !existsSync(join(dataDir, 'PG_VERSION'))) loadDataDir = options.template?.()
    keepPrivate(dataDir)
  }
  try {
    return options.engine ? await openInThisThread(options.engine, dataDir, lock) : await openOnItsThread(options, loadDataDir, lock)
  } catch (error) {
    lock?.release()
    throw error
  }
}

/**
 * PGlite on its own thread, reached through its socket as PostgreSQL is (lib/data/pglite-thread.ts):
 * the same pool, statements and COPY as on PostgreSQL; notifications come from the thread.
 */
async function openOnItsThread(options: DatabaseOptions, loadDataDir: Blob | undefined, lock: DataDirLock | undefined): Promise<Database> {
  const thread = await PGliteThread.start({ dataDir: options.dataDir, loadDataDir, socketDir: options.socketDir })
  let database: Database
  try {
    database = await createPostgres(thread.url(), { ...options, hangMs: undefined, lockTimeoutMs: undefined, searchPath: undefined }, thread)
  } catch (error) {
    await thread.close()
    throw error
  }
  return {
    ...database,
    engine: 'pglite',
    close: async () => {
      try {
        await database.close()
        await thread.close()
      } finally {
        lock?.release()
      }
    },
    lock,
    listen: async (channel, onNotify, onState) => {
      const unlisten = await thread.listen(channel, onNotify)
      onState(true)
      return unlisten
    },
    // Every listener is in this process: once the thread's notifications so far are handed over, all have heard.
    confirmHeard: async () => {
      await thread.heard()
      return []
    },
    // Its thread ended (PGlite failed): nothing answers any more.
    hung: () => thread.ended,
    embedded: thread,
  }
}

/** An older data directory, read in this thread by the PGlite release that wrote it (the upgrade's source). */
async function openInThisThread(engine: typeof PGlite, dataDir: string | undefined, lock: DataDirLock | undefined): Promise<Database> {
  const pglite = await engine.create({ dataDir, parsers })
  await pglite.exec(`SET TimeZone TO 'UTC'`)
  const db = new Kysely<DB>({ dialect: new PGliteDialect(copyingPGlite(pglite)), log: queryTimer('pglite') })
  return {
    db,
    engine: 'pglite',
    execScript: async (_executor, script) => {
      await pglite.exec(script)
    },
    close: async () => {
      try {
        await db.destroy()
      } finally {
        lock?.release()
      }
    },
    lock,
    listen: async (channel, onNotify) => pglite.listen(channel, onNotify),
    confirmHeard: async () => [],
    pglite,
  }
}

async function createPostgres(url: string, options: DatabaseOptions, embedded?: PGliteThread): Promise<Database> {
  // Statements are prepared once per connection (parse and analysis cached), but always planned for
  // their actual parameters: a generic plan of a datapoint read ignores how many locations a selection
  // holds and was measured about 7× slower than the custom plan (bench/README.md, "Datapoint reads").
  // JIT off: a datapoint read is many index probes whose estimated cost crosses jit_above_cost while it
  // runs in tens of milliseconds; compiling it took 0.37 s of a 0.45 s read (bench/README.md, "Read cache").
  const sessionOptions = ['-c TimeZone=UTC', '-c plan_cache_mode=force_custom_plan', '-c jit=off']
  if (options.searchPath) sessionOptions.push(`-c search_path=${options.searchPath}`)
  // Each new connection goes to the host taking writes now (one host, or the one found among several).
  const writable = new WritableHost(url)
  const poolOf = (max: number) =>
    new pg.Pool({
      Client: class extends pg.Client {
        constructor(config?: pg.ClientConfig) {
          super({ ...config, connectionString: writable.url() })
        }
      },
      max,
      // A server that does not answer (rather than refusing) must not hold requests forever. The
      // embedded database answers, in turn: a connection waiting behind a long transaction is not a fault.
      connectionTimeoutMillis: embedded ? 0 : 5_000,
      options: sessionOptions.join(' '),
      types: PG_TYPES,
    })
  const pool = poolOf(options.poolSize ?? 10)
  // Several hosts: start on the one taking writes now (the first may be a standby since a failover).
  if (writable.several) await writable.find()
  surviveLostConnections(pool, options.log)
  const guard = options.hangMs ? hangGuard(writable, options.hangMs, options.log) : undefined
  // The embedded database is one session that its connections share: a statement prepared under a name by
  // one would be there for the others, so its statements are not named.
  const dialect = new PostgresDialect({ pool: embedded ? unnamedStatements(pool) : preparedStatements(pool, writable, guard) })
  const db = new Kysely<DB>({ dialect, log: queryTimer(embedded ? 'pglite' : 'postgres') })
  // PostgreSQL: GETs have connections of their own, so a read never waits for one behind transforms and
  // writes that hold theirs for seconds (MVCC lets it read beside them). The embedded database is one
  // session whatever the connection: its reads share the pool.
  const readers = embedded ? undefined : poolOf(READ_POOL_SIZE)
  if (readers) surviveLostConnections(readers, options.log)
  const reads = readers && new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparedStatements(readers, writable, guard) }), log: queryTimer('postgres') })
  const standby = writable.several ? standbyReader(writable, sessionOptions.join(' ')) : undefined
  const readPool = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
  poolReaders.push(readPool)
  const scope = scopeOf(options.searchPath)
  const confirmations = new Confirmations(() => writable.url(), scope)
  return {
    db,
    engine: 'postgres',
    // With no parameters, node-postgres uses the simple protocol, which accepts a script.
    execScript: async (executor, script) => {
      await sql.raw(script).execute(executor)
    },
    close: async () => {
      poolReaders.splice(poolReaders.indexOf(readPool), 1)
      await guard?.stop()
      await confirmations.close()
      await db.destroy()
      await reads?.destroy()
      await standby?.destroy()
    },
    reads,
    listen: (channel, onNotify, onState) => listenWithReconnect(() => writable.url(), scope, channel, onNotify, onState),
    confirmHeard: (channel, timeoutMs, options) => confirmations.confirm(channel, timeoutMs, options),
    searchPath: options.searchPath,
    writable,
    standby,
    hung: guard && (() => guard.hung),
    lockTimeoutMs: options.lockTimeoutMs || undefined,
  }
}

/** Watches the host in use for hangs, and says so in the log when it starts and stops answering. */
function hangGuard(writable: WritableHost, hangMs: number, log: DatabaseLog | undefined): HangGuard {
  const guard = new HangGuard({
    url: () => writable.url(),
    hangMs,
    onChange: (hung, { url }) => {
      // A search for the writable host then skips it instead of waiting out a probe of it.
      writable.markHung(url, hung)
      const host = new URL(url).host
      if (hung) log?.warn({ host, hangMs }, 'the database does not answer (DATABASE_HANG_MS): requests get 503 until it does')
      else log?.info({ host }, 'the database answers again')
    },
  })
  guard.start()
  return guard
}

const PG_TYPES = {
  getTypeParser: ((oid: number, format?: string) => parsers[oid] ?? pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
}

/**
 * A client losing its server connection must not crash the process (/health reports it): the pool
 * hears it for idle clients; a client in use hears it itself, and its query fails with it (the
 * request's 503 is logged where it is answered).
 */
function surviveLostConnections(pool: pg.Pool, log?: DatabaseLog) {
  pool.on('error', (error) => log?.warn({ err: error }, 'an idle database connection was lost'))
  pool.on('connect', (client) => client.on('error', () => {}))
}

/** A small pool on a host other than the writable one (a standby answers reads, not writes). */
function standbyReader(writable: WritableHost, sessionOptions: string): Kysely<DB> {
  const pool = new pg.Pool({
    Client: class extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionString: writable.standbyUrl() })
      }
    },
    max: 2,
    connectionTimeoutMillis: 5_000,
    options: sessionOptions,
    types: PG_TYPES,
  })
  surviveLostConnections(pool)
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: queryTimer('postgres') })
}

/**
 * A read on the primary (through the reads' own pool, when there is one), or, when it finds no primary
 * (a failover under way), on the standby: what it reads may be a moment old, so nothing read there is cached.
 */
export async function readThroughFailover<T>(database: Database, read: (db: Kysely<DB>) => Promise<T>): Promise<T> {
  try {
    return await read(database.reads ?? database.db)
  } catch (error) {
    if (!database.standby || !meansPrimaryLost(error)) throw error
    return read(database.standby)
  }
}

const MAX_STATEMENTS_PER_CONNECTION = 1000

/** PostgreSQL: the connections of the GETs' own pool (beside the pool's 10 for everything else). */
export const READ_POOL_SIZE = 5

/**
 * Runs parameterised queries as named prepared statements: PostgreSQL then parses and plans each
 * query shape once per connection instead of on every request (the dispatcher's SQL shapes repeat).
 * The name is a hash of the SQL text; past a cap per connection, new shapes run unnamed.
 * Exported for its test.
 */
export function preparedStatements(pool: pg.Pool, writable?: WritableHost, guard?: HangGuard) {
  // Text → name, so a repeated statement is not hashed again (hashing was ~45 µs of a datapoint
  // read's CPU in a profile, with the API key's). Bounded: dropped whole when full, names are
  // recomputed the same.
  const names = new Map<string, string>()
  const nameOf = (text: string) => {
    let name = names.get(text)
    if (name === undefined) {
      if (names.size >= MAX_STATEMENTS_PER_CONNECTION) names.clear()
      names.set(text, (name = `k${createHash('sha1').update(text).digest('base64url')}`))
    }
    return name
  }
  const wrap = (client: pg.PoolClient) => {
    // The statements this connection has prepared.
    const prepared = new Set<string>()
    // Its host stopped taking writes (a failover): the connection is closed when released, not reused.
    let lost = false
    // With several hosts, a failure that means the primary is gone sends the host looking for the new one.
    const watch = (answer: Promise<pg.QueryResult>) =>
      !writable?.several
        ? answer
        : answer.catch((error: unknown) => {
            if (meansPrimaryLost(error)) {
              lost = true
              void writable.find()
            }
            throw error
          })
    return {
      query(text: unknown, values?: unknown[]) {
        if (typeof text === 'string' && carriesCopy(values)) return watch(copyWithPg(client, text, values[0]) as Promise<pg.QueryResult>)
        if (typeof text !== 'string' || !values?.length) return watch(client.query(text as string, values))
        const name = nameOf(text)
        if (!prepared.has(name) && prepared.size >= MAX_STATEMENTS_PER_CONNECTION) return watch(client.query(text, values))
        prepared.add(name)
        return watch(client.query({ name, text, values }))
      },
      release: (error?: Error | boolean) => {
        guard?.untrack(client)
        // A connection cut by the guard is not given to anyone again.
        client.release(lost || error || (client as unknown as { _ending?: boolean })._ending)
      },
    }
  }
  // A hung host refuses checkouts at once (lib/data/hang-guard.ts).
  const connect = () => (guard ? guard.checkout(() => pool.connect()) : pool.connect())
  // A connection refused before anything was sent is safe to try again, once, on the host found now.
  const checkout = async () => {
    try {
      return await connect()
    } catch (error) {
      if (!writable?.several || !meansPrimaryLost(error) || !(await writable.find())) throw error
      return connect()
    }
  }
  // One wrapper per pg client, for the client's life. Kysely's driver keeps its connection object in
  // a WeakMap keyed by what connect() returns: a new wrapper per checkout made it build a new
  // connection (and weak-collection entries) for every query (bench/README.md, "Datapoint reads").
  const wrappers = new WeakMap<pg.PoolClient, ReturnType<typeof wrap>>()
  return {
    connect: async () => {
      const client = await checkout()
      guard?.track(client)
      let wrapper = wrappers.get(client)
      if (!wrapper) wrappers.set(client, (wrapper = wrap(client)))
      return wrapper
    },
    end: () => pool.end(),
  } as unknown as pg.Pool
}

/** The pool for the embedded database: each query as it is (no names), COPY through pg-copy-streams. */
function unnamedStatements(pool: pg.Pool) {
  const wrappers = new WeakMap<pg.PoolClient, { query: (text: unknown, values?: unknown[]) => Promise<unknown>; release: (error?: Error | boolean) => void }>()
  const wrap = (client: pg.PoolClient) => ({
    query: (text: unknown, values?: unknown[]) =>
      typeof text === 'string' && carriesCopy(values) ? copyWithPg(client, text, values[0]) : client.query(text as string, values),
    release: (error?: Error | boolean) => client.release(error),
  })
  return {
    connect: async () => {
      const client = await pool.connect()
      let wrapper = wrappers.get(client)
      if (!wrapper) wrappers.set(client, (wrapper = wrap(client)))
      return wrapper
    },
    end: () => pool.end(),
  } as unknown as pg.Pool
}
