// Configuration from environment variables, validated by one TypeBox schema (README "Configuration").
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'

const Integer = (def: number, minimum = 0) => Type.Integer({ default: def, minimum })

/** 256 MiB: also the limit for files read back after they were accepted (lib/ingest/files.ts). */
export const XLSX_MAX_UNCOMPRESSED_DEFAULT = 268_435_456

export const ConfigSchema = Type.Object({
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: Integer(3000),
  DATA_DIR: Type.String({ default: './.data' }),
  MAX_UPLOAD_BYTES: Integer(52_428_800, 1),
  BODY_LIMIT_BYTES: Integer(10_485_760, 1),
  DISTRICT_TYPE_NAME: Type.String({ default: 'District' }),
  CORS_ORIGIN: Type.String({ default: '*' }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  ADMIN_API_KEY: Type.Optional(Type.String({ pattern: '^[0-9a-f]{40}$' })),
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
  TRUST_PROXY: Type.String({ default: 'none' }),
  RATE_LIMIT_ALLOWLIST: Type.String({ default: '127.0.0.1,::1,::ffff:127.0.0.1' }),
  MAX_EVENT_LOOP_DELAY_MS: Integer(1_000),
  // Load is shed only while the lag stays above MAX_EVENT_LOOP_DELAY_MS for this long (plugins/protection.ts).
  PRESSURE_WINDOW_MS: Integer(5_000, 1),
  // Start-up (opening and migrating the database, loading the model) may take this long before the process gives up.
  STARTUP_TIMEOUT_MS: Integer(120_000, 1),
  CONNECTION_TIMEOUT_MS: Integer(60_000),
  REQUEST_TIMEOUT_MS: Integer(120_000),
  XLSX_MAX_UNCOMPRESSED_BYTES: Integer(XLSX_MAX_UNCOMPRESSED_DEFAULT, 1),
  // Deepest nesting of a JSON body (or a JSON form field): deeper is 400 before anything runs. At most
  // 1,000, well below the depth at which walking a value overflows the stack.
  JSON_MAX_DEPTH: Type.Integer({ default: 64, minimum: 1, maximum: 1_000 }),
  // `0`: no /metrics and no per-request timing (bench/metrics.ts measures what they cost).
  METRICS: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '1' }),
  // /metrics needs `Authorization: Bearer <METRICS_TOKEN>` when set; open otherwise.
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  // Scale-out (docs/scaling.md): server processes on one port (`auto`: one per CPU).
  WEB_CONCURRENCY: Type.String({ default: '1', pattern: '^(auto|[1-9][0-9]*)$' }),
  // PostgreSQL streaming replicas for reads that change nothing, comma-separated (lib/data/replicas.ts).
  DATABASE_READ_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  // A replica further behind the primary than this is skipped; also how long a write waits for the replicas.
  REPLICA_MAX_LAG_MS: Integer(1_000, 1),
  REPLICA_CHECK_MS: Integer(1_000, 50),
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

/** Reads the known variables from `env`, applies defaults and fails naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key]
    if (value === undefined || value === '') continue
    raw[key] = NUMERIC.has(key) && /^-?\d+$/.test(value) ? Number(value) : value
  }
  const config = Value.Default(ConfigSchema, { ...raw, ...overrides }) as Config
  const [error] = Value.Errors(ConfigSchema, config)
  if (error) {
    const name = error.instancePath.replace(/^\//, '')
    throw new ConfigError(`Invalid environment variable ${name}=${JSON.stringify((config as Record<string, unknown>)[name])}: ${error.message}`)
  }
  return config
}
