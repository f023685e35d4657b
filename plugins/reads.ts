// The read service (lib/api/read-service.ts) and the write transactions of this process, shared by the
// dispatcher's routes and every read composed of other reads (a dashboard's data, shared links,
// exports): one detail cache, one read routing, and the caches a write drops.
import type { FastifyInstance } from 'fastify'
import { tables } from '../schemas/index.js'
import fp from 'fastify-plugin'
import { DetailCache } from '../lib/api/detail-cache.js'
import { ReadService } from '../lib/api/read-service.js'
import { ReadRouting } from '../lib/api/read-target.js'
import { Transactions } from '../lib/api/transactions.js'
import type { Resource } from '../lib/api/resource.js'
import { byName } from '../resources/registry.js'
import { jobOf } from '../resources/jobs.js'
import jobResource from '../resources/job.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Reads as the routes answer them, for the routes and for reads made of other reads. */
    reads: ReadService
    /** A write's transaction, and the caches it makes stale. */
    transactions: Transactions
  }
}

export default fp(
  async function reads(app: FastifyInstance) {
    const details = new DetailCache(app.config.DETAIL_CACHE_BYTES, Object.keys(tables))
    const unlisten = await details.listen(app.db)
    app.addHook('onClose', () => unlisten())
    const transactions = new Transactions(app.db, [details, app.readCache], () => app.dropAuthCache(), app.replicas)
    // A list's services: the transactions, and the resource's background form when it has one (resources/jobs.ts).
    const servicesOf = (resource: Resource, job = jobOf(resource.name)) => ({ transactions, background: job && { declaration: job, jobResource } })
    const service = new ReadService({
      config: app.config,
      jobs: app.jobs,
      readCache: app.readCache,
      details,
      routing: new ReadRouting(app.db.reads ?? app.db.db, app.replicas, app.db.standby),
      resourceNamed: (name) => byName.get(name),
      servicesOf,
    })
    app.decorate('reads', service)
    app.decorate('transactions', transactions)
  },
  { name: 'reads', dependencies: ['db', 'auth', 'jobs', 'http-cache'] },
)
