// Entry point: `npm start`.
import { buildApp } from './app.js'
import { ConfigError } from './lib/config.js'
import { loadDemoData } from './lib/demo.js'

try {
  const app = await buildApp()
  if (!app.config.DATABASE_URL && app.config.DEMO_DATA === '1') {
    const loaded = await loadDemoData(app.db.db)
    if (loaded) app.log.info('demo data loaded (set DEMO_DATA=0 to start empty)')
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down')
      void app.close().then(() => process.exit(0))
    })
  }
  await app.listen({ host: app.config.HOST, port: app.config.PORT })
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message)
    process.exit(2)
  }
  throw error
}
