// Opens the database (PGlite under DATA_DIR, or PostgreSQL with DATABASE_URL), applies the migrations,
// bootstraps the admin user, and closes it with the app.
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { createDatabase, type Database } from '../lib/database.js'
import { migrateToLatest } from '../lib/migrations.js'
import { ensureAdmin } from '../lib/bootstrap.js'

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
  }
}

export interface DbPluginOptions {
  /** An already open database (tests share one per process). */
  database?: Database
}

export default fp<DbPluginOptions>(
  async function db(app: FastifyInstance, options) {
    const { config } = app
    const database =
      options.database ??
      (await createDatabase(config.DATABASE_URL ? { url: config.DATABASE_URL } : { dataDir: join(config.DATA_DIR, 'pglite') }))
    if (!options.database) {
      const applied = await migrateToLatest(database)
      if (applied.length) app.log.info({ applied }, 'migrations applied')
      await ensureAdmin(database.db, config, (line) => app.log.info(line))
      app.addHook('onClose', () => database.close())
    }
    app.decorate('db', database)
  },
  { name: 'db' },
)
