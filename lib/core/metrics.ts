// What the process exposes to Prometheus at /metrics (plugins/metrics.ts), with prom-client. One
// registry per process: every layer records into the metrics declared here, so the names and labels
// are listed in one place. Labels are bounded: a route is its pattern (`/api/v1/campaign/:id/`), never
// a raw URL.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export const registry = new Registry()
collectDefaultMetrics({ register: registry })
// Gauges that prom-client names like counters (promtool refuses them); the same counts are kept by
// type in nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name)

const FAST = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const SLOW = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]

export const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request to its answer, by method, route pattern and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: FAST,
  registers: [registry],
})

export const dbQueryDuration = new Histogram({
  name: 'rhizome_db_query_duration_seconds',
  help: 'Time of each database statement, by engine',
  labelNames: ['engine'] as const,
  buckets: FAST,
  registers: [registry],
})

/** The pool's state, read at scrape time from whoever registered a reader (lib/data/database.ts). */
export const poolReaders: Array<() => { total: number; idle: number; waiting: number }> = []
for (const state of ['total', 'idle', 'waiting'] as const) {
  new Gauge({
    name: `rhizome_db_pool_${state}_connections`,
    help: `PostgreSQL pool connections: ${state === 'waiting' ? 'requests waiting for one' : state}`,
    registers: [registry],
    collect() {
      this.set(poolReaders.reduce((sum, read) => sum + read()[state], 0))
    },
  })
}

export const databaseFailovers = new Counter({
  name: 'rhizome_db_failovers_total',
  help: 'Times this process found a different PostgreSQL host taking writes (DATABASE_URL with several hosts)',
  registers: [registry],
})

export const secondsWithoutPrimary = new Counter({
  name: 'rhizome_db_without_primary_seconds_total',
  help: 'Seconds from writes failing for want of a writable PostgreSQL host until one was found again',
  registers: [registry],
})

export const replicaReads = new Counter({
  name: 'rhizome_db_reads_total',
  help: 'Reads that change nothing, by where they were sent: a replica (DATABASE_READ_URL) or the primary',
  labelNames: ['target'] as const,
  registers: [registry],
})

export const cacheLookups = new Counter({
  name: 'rhizome_cache_lookups_total',
  help: 'Lookups in the in-memory caches (detail representations, read answers, authentications), by cache and result',
  labelNames: ['cache', 'result'] as const,
  registers: [registry],
})

export const cacheEvictions = new Counter({
  name: 'rhizome_cache_evictions_total',
  help: 'Entries removed from an in-memory cache to make room (least recently used first), by cache',
  labelNames: ['cache'] as const,
  registers: [registry],
})

// Weakly held: a cache of a closed application (tests build many) is not kept alive by its gauge.
const weighedCaches: Array<{ name: string; cache: WeakRef<{ weight: number }> }> = []

/** The bytes each cache holds, read at scrape time from the caches that registered. */
export const cacheBytes = Object.assign(
  new Gauge({
    name: 'rhizome_cache_bytes',
    help: 'What the in-memory caches hold (bytes of answers kept, as each cache weighs them), by cache',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const { name, cache } of weighedCaches) this.inc({ cache: name }, cache.deref()?.weight ?? 0)
    },
  }),
  {
    register(name: string, cache: { weight: number }) {
      for (let i = weighedCaches.length - 1; i >= 0; i--) if (!weighedCaches[i].cache.deref()) weighedCaches.splice(i, 1)
      weighedCaches.push({ name, cache: new WeakRef(cache) })
    },
  },
)

export const detectTexts = new Counter({
  name: 'rhizome_detect_texts_total',
  help: 'Texts scored by /detect and /detect/batch',
  registers: [registry],
})

export const detectBatchWindows = new Histogram({
  name: 'rhizome_detect_windows_per_forward_pass',
  help: 'Windows scored together in one forward pass of the model (micro-batching)',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
  registers: [registry],
})

export const detectInference = new Histogram({
  name: 'rhizome_detect_inference_seconds',
  help: 'Time of one forward pass of the model',
  buckets: FAST,
  registers: [registry],
})

export const ingestCells = new Counter({
  name: 'rhizome_ingest_cells_total',
  help: 'Cells of uploaded documents staged for refresh master',
  registers: [registry],
})

export const ingestRejectedRows = new Counter({
  name: 'rhizome_ingest_rejected_rows_total',
  help: 'Rows of uploaded documents not written, by reason',
  labelNames: ['reason'] as const,
  registers: [registry],
})

export const recomputeDuration = new Histogram({
  name: 'rhizome_recompute_duration_seconds',
  help: "Time of one campaign's recompute (aggregation and calculated indicators)",
  buckets: SLOW,
  registers: [registry],
})

export const eventLoopLag = new Gauge({
  name: 'rhizome_event_loop_lag_seconds',
  help: 'The latest event-loop lag sample of the load-shedding monitor',
  registers: [registry],
})
