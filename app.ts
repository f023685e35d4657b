// Builds the application: configuration, third-party plugins, then our own, in dependency order.
import { maxHeaderSize } from 'node:http'
import { clientErrorHandler, frameworkErrors } from './lib/api/framework-errors.js'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import proxyAddr from 'proxy-addr'
import { listSetting, loadConfig, type Config } from './lib/core/config.js'
import type { Database } from './lib/data/database.js'
import configPlugin from './plugins/config.js'
import errors from './plugins/errors.js'
import shutdown from './plugins/shutdown.js'
import negotiation from './plugins/negotiation.js'
import workPools from './plugins/work-pools.js'
import metrics, { metricsRoute } from './plugins/metrics.js'
import bodyParsers from './plugins/body-parsers.js'
import external from './plugins/external.js'
import protection from './plugins/protection.js'
import db from './plugins/db.js'
import auth from './plugins/auth.js'
import httpCache from './plugins/http-cache.js'
import reads from './plugins/reads.js'
import dispatcher from './plugins/dispatcher.js'
import backup from './plugins/backup.js'
import session from './plugins/session.js'
import passwords from './plugins/passwords.js'
import dhis2 from './plugins/dhis2.js'
import dhis2Metadata from './plugins/dhis2-metadata.js'
import dashboardData from './plugins/dashboard-data.js'
import exportFile from './plugins/export.js'
import originalPaths from './plugins/original-paths.js'
import sharedDashboards from './plugins/shared.js'
import webApp from './plugins/web-app.js'
import jobs from './plugins/jobs.js'
import serviceRoutes from './plugins/service-routes.js'
import classifier from './plugins/classifier.js'
import { serializerCompiler } from './lib/api/answer-text.js'

export interface BuildOptions {
  /** Overrides on top of the environment. */
  config?: Partial<Config>
  /** An open, migrated database (tests); otherwise the db plugin opens one from the config. */
  database?: Database
  logger?: FastifyServerOptions['logger']
  /** Where the standard logger writes (default stdout); tests read it. */
  logStream?: NodeJS.WritableStream
  /** A job worker (worker.ts): the database and the job queue, no HTTP routes. */
  worker?: boolean
}

const REQUEST_ID = /^[\w.:@-]{1,128}$/

function requestIds(proxies: string[]) {
  const trusted = proxyAddr.compile(proxies)
  return (request: IncomingMessage) => {
    const given = request.headers['x-request-id']
    const peer = request.socket?.remoteAddress
    return typeof given === 'string' && REQUEST_ID.test(given) && peer && trusted(peer, 0) ? given : randomUUID()
  }
}

export async function buildApp(options: BuildOptions = {}): Promise<FastifyInstance> {
  const config = loadConfig(process.env, options.config)
  const app = Fastify({
    // Keys travel in the Authorization header: never written to a log, whatever serializer a line uses.
    logger: options.logger ?? {
      level: config.LOG_LEVEL,
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'request.headers.authorization'], censor: '[redacted]' },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    bodyLimit: config.BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    // After SIGTERM every new request gets the API's own 503 (plugins/shutdown.ts), not Fastify's bare one.
    return503OnClosing: false,
    // Slow clients: an idle socket is closed, and a request must arrive whole within the limit.
    connectionTimeout: config.CONNECTION_TIMEOUT_MS,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    // X-Forwarded-For is believed only from these addresses (rate limits key on the client address).
    trustProxy: listSetting(config.TRUST_PROXY),
    // Opening, creating and migrating the database is long by nature on a busy machine; each step logs.
    pluginTimeout: config.STARTUP_TIMEOUT_MS,
    // X-Request-Id from a trusted proxy when it sends a sane one, else a new one (returned on every
    // answer and in every log line of the request, plugins/protection.ts).
    genReqId: requestIds(listSetting(config.TRUST_PROXY)),
    // What is refused before a route runs answers in the API's error shape too.
    clientErrorHandler: clientErrorHandler(maxHeaderSize),
    frameworkErrors,
  })
  // Answers written from their response schemas, each compiled when first answered (lib/api/answer-text.ts).
  app.setSerializerCompiler(serializerCompiler)
  await app.register(configPlugin, { config })
  await app.register(errors)
  await app.register(workPools)
  if (options.worker) {
    await app.register(db, { database: options.database })
    await app.register(jobs)
    return app
  }
  await app.register(shutdown)
  await app.register(negotiation)
  await app.register(metrics)
  await app.register(bodyParsers)
  await app.register(external)
  await app.register(metricsRoute)
  await app.register(protection)
  await app.register(db, { database: options.database })
  await app.register(auth)
  await app.register(jobs)
  await app.register(httpCache)
  await app.register(reads)
  await app.register(dispatcher)
  await app.register(backup)
  await app.register(session)
  await app.register(passwords)
  await app.register(dhis2)
  await app.register(dhis2Metadata)
  await app.register(dashboardData)
  await app.register(exportFile)
  await app.register(originalPaths)
  await app.register(sharedDashboards)
  await app.register(webApp)
  await app.register(classifier)
  await app.register(serviceRoutes)
  return app
}
