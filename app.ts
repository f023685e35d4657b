// Builds the application: configuration, third-party plugins, then our own, in dependency order.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { listSetting, loadConfig, type Config } from './lib/config.js'
import type { Database } from './lib/database.js'
import configPlugin from './plugins/config.js'
import errors from './plugins/errors.js'
import bodyParsers from './plugins/body-parsers.js'
import external from './plugins/external.js'
import protection from './plugins/protection.js'
import db from './plugins/db.js'
import auth, { isApiPath } from './plugins/auth.js'
import dispatcher from './plugins/dispatcher.js'
import serviceRoutes from './plugins/service-routes.js'
import classifier from './plugins/classifier.js'

export interface BuildOptions {
  /** Overrides on top of the environment. */
  config?: Partial<Config>
  /** An open, migrated database (tests); otherwise the db plugin opens one from the config. */
  database?: Database
  logger?: FastifyServerOptions['logger']
}

export async function buildApp(options: BuildOptions = {}): Promise<FastifyInstance> {
  const config = loadConfig(process.env, options.config)
  const app = Fastify({
    logger: options.logger ?? { level: config.LOG_LEVEL },
    bodyLimit: config.BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    return503OnClosing: true,
    // Slow clients: an idle socket is closed, and a request must arrive whole within the limit.
    connectionTimeout: config.CONNECTION_TIMEOUT_MS,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    // X-Forwarded-For is believed only from these addresses (rate limits key on the client address).
    trustProxy: listSetting(config.TRUST_PROXY),
  })
  await app.register(configPlugin, { config })
  await app.register(errors)
  await app.register(bodyParsers)
  await app.register(external)
  await app.register(protection)
  await app.register(db, { database: options.database })
  await app.register(auth)
  await app.register(dispatcher)
  await app.register(classifier)
  await app.register(serviceRoutes)
  app.addHook('onSend', (request, reply, payload, done) => {
    if (isApiPath(request.url)) reply.header('cache-control', 'no-cache')
    done(null, payload)
  })
  return app
}
