// Configuration from environment variables, validated by one TypeBox schema (README "Configuration").
import { isIP } from 'node:net'
import proxyAddr from 'proxy-addr'
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'

const Integer = (def: number, minimum = 0) => Type.Integer({ default: def, minimum })

/** 256 MiB: also the limit for files read back after they were accepted (lib/ingest/files.ts). */
export const XLSX_MAX_UNCOMPRESSED_DEFAULT = 268_435_456

export const ConfigSchema = Type.Object({
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'a postgres:// or postgresql:// URL' })),
  HOST: Type.String({ default: '127.0.0.1', description: 'an IP address or a host name this machine resolves' }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65_535 }),
  DATA_DIR: Type.String({ default: './.data', description: 'a directory this user may write, or a path where one can be made' }),
  MAX_UPLOAD_BYTES: Integer(52_428_800, 1),
  BODY_LIMIT_BYTES: Integer(10_485_760, 1),
  DISTRICT_TYPE_NAME: Type.String({ default: 'District', pattern: '\\S', description: 'the name of a location type (not blank)' }),
  CORS_ORIGIN: Type.String({ default: '*', description: '`*`, or origins (`https://example.org`, scheme, host and port only) separated by commas' }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  ADMIN_API_KEY: Type.Optional(Type.String({ pattern: '^[0-9a-f]{40}$', description: '40 lower-case hex characters' })),
  DEMO_DATA: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '1' }),
  DETECT_MAX_CHARS: Integer(10_000, 1),
  DETECT_MAX_BATCH: Integer(256, 1),
  DETECT_MICROBATCH_MAX: Integer(64, 1),
  DETECT_MICROBATCH_WAIT_MS: Integer(2, 0),
  DETECT_QUEUE_MAX: Integer(10_000, 1),
  // Protection (SECURITY.md): per-client limits, saturation, slow clients, decompression.
  RATE_LIMIT_WINDOW_MS: Integer(60_000, 1),
  RATE_LIMIT_DETECT_MAX: Integer(6_000, 1),
  AUTH_FAILURE_MAX: Integer(30, 1),
  // Sign-in (lib/api/sign-in-guard.ts): wrong passwords an account takes from all addresses per window
  // before only addresses without a wrong try may try it; password checks run at once, and waiting.
  AUTH_ACCOUNT_FAILURE_MAX: Integer(100, 1),
  AUTH_HASH_CONCURRENCY: Integer(1, 1),
  AUTH_HASH_QUEUE: Integer(16),
  // Sessions of people signed in with a password (lib/data/sessions.ts): idle and absolute lifetimes.
  SESSION_IDLE_MS: Integer(3_600_000, 1_000),
  SESSION_ABSOLUTE_MS: Integer(43_200_000, 1_000),
  // Behind a reverse proxy every client has the proxy's address; name the proxy so limits see clients.
  TRUST_PROXY: Type.String({
    default: 'none',
    description: '`none`, or IP addresses, CIDR ranges, `loopback`, `linklocal` or `uniquelocal` separated by commas',
  }),
  RATE_LIMIT_ALLOWLIST: Type.String({ default: '127.0.0.1,::1,::ffff:127.0.0.1', description: '`none`, or IP addresses separated by commas' }),
  MAX_EVENT_LOOP_DELAY_MS: Integer(1_000),
  // Load is shed only while the lag stays above MAX_EVENT_LOOP_DELAY_MS for this long (plugins/protection.ts).
  PRESSURE_WINDOW_MS: Integer(5_000, 1),
  // Start-up (opening and migrating the database, loading the model) may take this long before the process gives up.
  STARTUP_TIMEOUT_MS: Integer(120_000, 1),
  // On SIGTERM, how long requests in flight may take to finish before the process closes anyway.
  SHUTDOWN_TIMEOUT_MS: Integer(30_000),
  CONNECTION_TIMEOUT_MS: Integer(60_000),
  REQUEST_TIMEOUT_MS: Integer(120_000),
  XLSX_MAX_UNCOMPRESSED_BYTES: Integer(XLSX_MAX_UNCOMPRESSED_DEFAULT, 1),
  // Deepest nesting of a JSON body (or a JSON form field): deeper is 400 before anything runs. At most
  // 1,000, well below the depth at which walking a value overflows the stack.
  JSON_MAX_DEPTH: Type.Integer({ default: 64, minimum: 1, maximum: 1_000 }),
  // `0`: no /metrics and no per-request timing (bench/metrics.ts measures what they cost).
  METRICS: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '1' }),
  // /metrics needs `Authorization: Bearer <METRICS_TOKEN>` when set; open otherwise.
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16, description: 'at least 16 characters' })),
  // Scale-out (docs/scaling.md): server processes on one port (`auto`: one per CPU).
  WEB_CONCURRENCY: Type.String({ default: '1', pattern: '^(auto|[1-9][0-9]*)$', description: '`auto` or a whole number from 1' }),
  // PostgreSQL streaming replicas for reads that change nothing, comma-separated (lib/data/replicas.ts).
  DATABASE_READ_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'postgres:// URLs separated by commas' })),
  // A replica further behind the primary than this is skipped; also how long a write waits for the replicas.
  REPLICA_MAX_LAG_MS: Integer(1_000, 1),
  REPLICA_CHECK_MS: Integer(1_000, 50),
  // A database host that answers no ping within this is taken as hung: requests get 503 at once until it
  // answers (lib/data/hang-guard.ts). A request's write waits at most DATABASE_LOCK_TIMEOUT_MS for a lock (0: no limit).
  DATABASE_HANG_MS: Integer(2_000, 100),
  DATABASE_LOCK_TIMEOUT_MS: Integer(3_000),
  // Background jobs (lib/data/job-queue.ts): workers in this process per queue (0 = serve HTTP only).
  JOB_CONCURRENCY: Integer(1),
  // A running job not finished after this long is taken for lost (its worker died) and retried elsewhere.
  JOB_EXPIRE_SECONDS: Integer(3_600, 1),
  JOB_RETRY_LIMIT: Integer(2),
  JOB_POLL_MS: Integer(2_000, 500),
  // How often lost jobs are looked for; a killed worker's job is retried after JOB_EXPIRE_SECONDS plus up to this.
  JOB_MAINTENANCE_SECONDS: Integer(60, 1),
  // On shutdown a running job gets this long to finish, then goes back to the queue.
  JOB_SHUTDOWN_MS: Integer(30_000, 1_000),
  // Jobs one user may have queued or running at once; more is 429 until some have run.
  JOB_MAX_QUEUED_PER_USER: Integer(20, 1),
  IDEMPOTENCY_KEYS_PER_USER: Integer(10_000, 1),
  // Heavy work off the event loop (lib/core/worker-pool.ts): threads of each pool (parsing, drawing),
  // tasks one user or shared link may have running or waiting in a pool, and all of them; past → 429.
  WORKER_THREADS: Integer(1, 1),
  WORK_QUEUE_PER_USER: Integer(4, 1),
  WORK_QUEUE_MAX: Integer(32, 1),
  // Charts one dashboard may hold (a write with more is 400); distinct widths of one dashboard drawn per
  // RATE_LIMIT_WINDOW_MS by one user or link before a new width is 429 (lib/export/budget.ts).
  MAX_CHARTS_PER_DASHBOARD: Integer(50, 1),
  // Outliers (resources/campaign_outlier.ts): how many standard deviations from a value's history, over
  // how many of its last values before the campaign; generated min–max ranges are its mean ± MIN_MAX_FACTOR of them.
  OUTLIER_Z_SCORE: Type.Number({ default: 3, exclusiveMinimum: 0 }),
  OUTLIER_HISTORY_CAMPAIGNS: Integer(6, 2),
  // Campaigns whose history summary (sql/036) is kept, the latest made first: each is a row per
  // location and indicator (~190,000 for a country).
  OUTLIER_SUMMARIES_KEPT: Integer(12, 1),
  MIN_MAX_FACTOR: Type.Number({ default: 2, exclusiveMinimum: 0 }),
  EXPORT_WIDTHS_PER_DASHBOARD: Integer(8, 1),
  // Detail representations kept in memory (their bytes), dropped on every database change (0 = no cache).
  DETAIL_CACHE_BYTES: Integer(64 * 1024 * 1024),
  // List and datapoint answers kept in memory (bytes, every encoding counted), each dropped when a table it read changes (0 = no cache).
  READ_CACHE_BYTES: Integer(256 * 1024 * 1024),
})

export type Config = Static<typeof ConfigSchema>

const NUMERIC = new Set(
  Object.entries(ConfigSchema.properties)
    .filter(([, s]) => 'type' in s && s.type === 'integer')
    .map(([k]) => k),
)

/** A comma-separated list setting; `none` is the empty list (an empty variable means "the default"). */
export const listSetting = (value: string) =>
  value.trim() === 'none'
    ? []
    : value
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean)

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** What a variable takes, said by every message about a bad value: from its schema. */
export function expected(name: string): string {
  const schema = (ConfigSchema.properties as unknown as Record<string, Record<string, unknown>>)[name]
  if (typeof schema.description === 'string') return schema.description
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(', ')}`
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as { const: string }[]).map((s) => s.const).join(' or ')
  const { minimum, maximum } = schema as { minimum?: number; maximum?: number }
  if (maximum !== undefined) return `a whole number from ${minimum} to ${maximum}`
  return `a whole number from ${minimum ?? 0}`
}

/** The error that stops the start (exit 2): the variable, the value given, what it takes and why not. */
export function badSetting(name: string, value: unknown, why?: string): ConfigError {
  return new ConfigError(`Invalid environment variable ${name}=${JSON.stringify(String(value))}: ${name} takes ${expected(name)}${why ? ` (${why})` : ''}`)
}

/** Reads the known variables from `env`, applies defaults and fails naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key]
    // An empty variable is the same as an unset one: its default.
    if (value === undefined || value === '') continue
    raw[key] = NUMERIC.has(key) && /^-?\d+$/.test(value) ? Number(value) : value
  }
  const config = Value.Default(ConfigSchema, { ...raw, ...overrides }) as Config
  const [error] = Value.Errors(ConfigSchema, config)
  if (error) {
    const name = error.instancePath.replace(/^\//, '')
    throw badSetting(name, (config as Record<string, unknown>)[name])
  }
  checkLists(config)
  return config
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i

/** An origin as a browser sends it: scheme, host and port, nothing after. */
function isOrigin(value: string): boolean {
  try {
    return new URL(value).origin === value
  } catch {
    return false
  }
}

/**
 * The checks a schema cannot make: the values the listen address, the proxy check, the rate limits'
 * allow list and CORS would otherwise take as they come, or throw on later without naming the variable.
 */
function checkLists(config: Config) {
  if (!isIP(config.HOST) && !HOST_NAME.test(config.HOST)) throw badSetting('HOST', config.HOST, 'neither an IP address nor a host name')
  try {
    proxyAddr.compile(listSetting(config.TRUST_PROXY))
  } catch (error) {
    throw badSetting('TRUST_PROXY', config.TRUST_PROXY, (error as Error).message)
  }
  const notIp = listSetting(config.RATE_LIMIT_ALLOWLIST).find((address) => !isIP(address))
  if (notIp !== undefined) throw badSetting('RATE_LIMIT_ALLOWLIST', config.RATE_LIMIT_ALLOWLIST, `not an IP address: ${notIp}`)
  const origins = config.CORS_ORIGIN.split(',').map((o) => o.trim())
  const notOrigin = config.CORS_ORIGIN.trim() === '*' ? undefined : origins.find((o) => !isOrigin(o))
  if (notOrigin !== undefined) throw badSetting('CORS_ORIGIN', config.CORS_ORIGIN, `not an origin: ${JSON.stringify(notOrigin)}`)
}
