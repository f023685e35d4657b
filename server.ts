// Entry point: `npm start` (cli/start.mjs builds when the sources changed, then imports this). With
// WEB_CONCURRENCY > 1 this process supervises that many server processes (cluster.ts).
import cluster from 'node:cluster'
import { availableParallelism } from 'node:os'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './lib/core/config.js'
import { superviseServers } from './cluster.js'
import { loadDemoData } from './lib/engine/demo.js'
import { DataDirInUseError } from './lib/data/data-dir-lock.js'
import { DataDirTooOld } from './lib/data/database.js'
import { StartupTimeout, startupSteps } from './plugins/db.js'
import { loadDetector } from './plugins/classifier.js'

/** How many server processes WEB_CONCURRENCY asks for. */
function serverProcesses(): number {
  const config = loadConfig()
  const count = config.WEB_CONCURRENCY === 'auto' ? availableParallelism() : Number(config.WEB_CONCURRENCY)
  if (count > 1 && !config.DATABASE_URL) {
    throw new ConfigError(`WEB_CONCURRENCY=${config.WEB_CONCURRENCY} needs DATABASE_URL: the embedded database belongs to one process`)
  }
  return count
}

try {
  const processes = cluster.isPrimary ? serverProcesses() : 1
  if (processes > 1) {
    await superviseServers(processes)
  } else {
    await serve()
  }
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message)
    process.exit(2)
  }
  if (error instanceof DataDirInUseError || error instanceof DataDirTooOld || error instanceof StartupTimeout) {
    console.error(error.message)
    process.exit(1)
  }
  throw error
}

async function serve() {
  const started = performance.now()
  // The model loads while the database opens (buildApp's classifier plugin joins this load).
  void loadDetector().catch(() => undefined)
  const app = await buildApp()
  const step = startupSteps(app)
  if (!app.config.DATABASE_URL && app.config.DEMO_DATA === '1') {
    const loaded = await step('loading the demo data into an empty database', () => loadDemoData(app.db.db))
    if (loaded) app.log.info('demo data loaded (set DEMO_DATA=0 to start empty)')
  }
  // The model's loading blocks the event loop for a while: done before the first request is taken
  // (a failure leaves /detect answering 503, reported by /health).
  await step('loading the detection model', () => app.detection.ready.catch(() => undefined))
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down')
      void app.close().then(() => process.exit(0))
    })
  }
  await app.listen({ host: app.config.HOST, port: app.config.PORT })
  const address = app.server.address()
  if (address && typeof address === 'object') {
    const host = ['0.0.0.0', '::'].includes(address.address) ? '127.0.0.1' : address.family === 'IPv6' ? `[${address.address}]` : address.address
    app.db.lock?.announce(`http://${host}:${address.port}`)
  }
  app.log.info({ ms: Math.round(performance.now() - started) }, 'ready')
}
