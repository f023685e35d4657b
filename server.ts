// Entry point: `npm start` (cli/start.mjs builds when the sources changed, then imports this). With
// WEB_CONCURRENCY > 1 this process supervises that many server processes (cluster.ts).
// Exit codes: 2 a bad setting (named, before anything is created or printed), 1 a start-up step that
// failed or timed out (named), 0 a clean stop. Only the settings' modules are imported before the
// settings are checked: a bad one is refused in a fraction of a second.
import cluster from 'node:cluster'
import { availableParallelism } from 'node:os'
import type { FastifyInstance } from 'fastify'
import { type Config, ConfigError, loadConfig } from './lib/core/config.js'
import { checkSettings } from './lib/core/settings-check.js'

/** A start-up step that failed for a reason its message says whole. */
class StepFailed extends Error {}

/** How many server processes WEB_CONCURRENCY asks for. */
function serverProcesses(config: Config): number {
  const count = config.WEB_CONCURRENCY === 'auto' ? availableParallelism() : Number(config.WEB_CONCURRENCY)
  if (count > 1 && !config.DATABASE_URL) {
    throw new ConfigError(`WEB_CONCURRENCY=${config.WEB_CONCURRENCY} needs DATABASE_URL: the embedded database belongs to one process`)
  }
  return count
}

try {
  const config = loadConfig()
  await checkSettings(config)
  const processes = cluster.isPrimary ? serverProcesses(config) : 1
  // Tried once, by the process that owns the address: a cluster's server processes share the
  // supervisor's listening socket, so a replacement forked while the others serve would find the
  // port "in use" by its own siblings and die at every restart.
  if (cluster.isPrimary) await assertPortFree(config)
  if (processes > 1) {
    const { superviseServers } = await import('./cluster.js')
    await superviseServers(processes)
  } else {
    await serve()
  }
} catch (error) {
  await failed(error)
}

/**
 * The address is tried before anything is created (the data directory, the admin's key and password,
 * the demo data): a port in use is said at once, not after a start that leaves all that behind. The
 * server listens for good once ready; another process could take the port meanwhile, which that
 * listen still reports.
 */
async function assertPortFree(config: Config) {
  const { createServer } = await import('node:net')
  const probe = createServer()
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject)
    probe.listen({ host: config.HOST, port: config.PORT, exclusive: true }, () => probe.close(() => resolve()))
  }).catch((error: Error) => {
    throw new StepFailed(`listening on ${config.HOST}:${config.PORT} failed (HOST, PORT): ${error.message}`)
  })
}

/** Says why the start failed, and exits: 2 for a setting, 1 for a step (with its stack when unforeseen). */
async function failed(error: unknown): Promise<never> {
  if (error instanceof ConfigError) {
    console.error(error.message)
    process.exit(2)
  }
  const { DataDirInUseError } = await import('./lib/data/data-dir-lock.js')
  const { DataDirTooOld } = await import('./lib/data/database.js')
  const { lastStartupStep, StartupTimeout } = await import('./plugins/db.js')
  const foreseen = error instanceof StepFailed || error instanceof DataDirInUseError || error instanceof DataDirTooOld || error instanceof StartupTimeout
  // A refusal of the database or the system (a SQLSTATE or an errno code: a database that does not
  // exist, a connection refused) is said with the step it stopped, without a stack; anything else
  // keeps its stack, for a bug report.
  const code = (error as { code?: unknown })?.code
  const step = lastStartupStep() ?? 'starting'
  if (foreseen) console.error((error as Error).message)
  else if (typeof code === 'string') console.error(`${step} failed: ${(error as Error).message} (${code})`)
  else console.error(`${step} failed: ${(error as Error)?.stack ?? String(error)}`)
  process.exit(1)
}

/** On SIGTERM/SIGINT: new requests get 503, those in flight finish, then the database closes. */
function stopCleanly(app: FastifyInstance) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, async () => {
      app.log.info({ signal }, 'shutting down: new requests get 503, those in flight finish')
      const { waitedFor, left } = await app.drain(app.config.SHUTDOWN_TIMEOUT_MS)
      if (left) app.log.warn({ left, ms: app.config.SHUTDOWN_TIMEOUT_MS }, 'requests still running after SHUTDOWN_TIMEOUT_MS: closing anyway')
      else app.log.info({ waitedFor }, 'requests in flight finished')
      await app.close()
      process.exit(0)
    })
  }
}

async function serve() {
  const started = performance.now()
  const { buildApp } = await import('./app.js')
  const { loadDemoData } = await import('./lib/engine/demo.js')
  const { startupSteps } = await import('./plugins/db.js')
  const { loadDetector } = await import('./plugins/classifier.js')
  // The model loads while the database opens (buildApp's classifier plugin joins this load); its
  // time is kept to be said once the log exists.
  const modelStarted = performance.now()
  let modelMs: number | undefined
  void loadDetector().then(
    () => (modelMs = Math.round(performance.now() - modelStarted)),
    () => undefined,
  )
  const app = await buildApp()
  const step = startupSteps(app)
  if (!app.config.DATABASE_URL && app.config.DEMO_DATA === '1') {
    const loaded = await step('loading the demo data into an empty database', () => loadDemoData(app.db.db))
    if (loaded) app.log.info('demo data loaded (set DEMO_DATA=0 to start empty)')
  }
  // The model's loading blocks the event loop for a while: done before the first request is taken
  // (a failure leaves /detect answering 503, reported by /health).
  if (modelMs !== undefined) app.log.info({ ms: modelMs }, 'the detection model loaded while the database opened')
  else await step('loading the detection model (begun with the database)', () => app.detection.ready.catch(() => undefined))
  stopCleanly(app)
  const where = `${app.config.HOST}:${app.config.PORT}`
  await app.listen({ host: app.config.HOST, port: app.config.PORT }).catch(async (error: Error) => {
    await app.close().catch(() => undefined)
    throw new StepFailed(`listening on ${where} failed (HOST, PORT): ${error.message}`)
  })
  const address = app.server.address()
  let url: string | undefined
  if (address && typeof address === 'object') {
    const host = ['0.0.0.0', '::'].includes(address.address) ? '127.0.0.1' : address.family === 'IPv6' ? `[${address.address}]` : address.address
    url = `http://${host}:${address.port}`
    app.db.lock?.announce(url)
  }
  // Where people sign in, said where an operator looks first.
  app.log.info({ ms: Math.round(performance.now() - started), web_app: url && `${url}/app/` }, `ready: sign in at ${url}/app/`)
}
