// Entry point of `npm run worker`: a process that only works background jobs (lib/data/job-queue.ts),
// one per extra machine or core. It needs PostgreSQL: the embedded database belongs to one process,
// whose server works its jobs itself.
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './lib/core/config.js'

try {
  const config = loadConfig()
  if (!config.DATABASE_URL) {
    console.error('A job worker needs DATABASE_URL: the embedded database belongs to the server process, which works its jobs itself (JOB_CONCURRENCY).')
    process.exit(2)
  }
  if (config.JOB_CONCURRENCY < 1) {
    console.error('JOB_CONCURRENCY=0 would make a worker that works nothing: give it 1 or more.')
    process.exit(2)
  }
  const app = await buildApp({ worker: true })
  await app.ready()
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down: the running job finishes or goes back to the queue')
      void app.close().then(() => process.exit(0))
    })
  }
  app.log.info({ concurrency: config.JOB_CONCURRENCY }, 'working jobs')
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message)
    process.exit(2)
  }
  throw error
}
