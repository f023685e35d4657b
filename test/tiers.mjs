// Which test files run in which tier (test/run.mjs; test/README.md, "Tiers"):
//   `npm test`          every file not named below: the API, the engine and the modules, in the test's
//                       process on the embedded database;
//   `npm run test:e2e`  the files below, on the embedded database;
//   `npm run test:pg`   the files where the engine can change the outcome, on the PostgreSQL server of
//                       DATABASE_URL: the operator files (but ONE_ENGINE's) and long runs below, and the
//                       in-process files named ENGINE (pools, concurrency, COPY, locks, notifications, replicas, time
//                       zones, the engine's totals). The others run the same SQL through the same
//                       driver on both engines, and run in `npm test` (docs/decisions.md, "Test tiers").
// A new file joins `npm test` unless it is named here.

/** The web app's pages in Chromium (test/browser.ts). */
export const BROWSER = [
  'web-admin',
  'web-catalog',
  'web-chart-types',
  'web-charts',
  'web-dashboard',
  'web-data',
  'web-editor',
  'web-entry',
  'web-entry-offline',
  'web-entry-tabs',
  'web-french',
  'web-print',
  'web-quality',
  'web-share',
  'web-shared-browser',
  'web-sign-in',
  'web-upload',
]

/**
 * The server, its workers and the CLI as separate processes, extra database servers and nginx
 * (test/processes.ts, test/topology.ts), a validating proxy (Prism) in front of a server, and a copy of
 * the project migrated and run.
 */
export const OPERATOR = [
  'backup',
  'bench-stop',
  'campaign-locks',
  'cli',
  'database-loss',
  'db-thread',
  'docs-commands',
  'failover',
  'job-kinds',
  'job-workers',
  'openapi-proxy',
  'readme-commands',
  'reupload-takeover',
  'scale-out',
  'settings',
  'sign-in',
  'stall',
  'start',
  'stop',
  'transform-memory',
  'upgrade',
  'upload-bodies',
]

/** Long runs of the engine under concurrency and random work: property tests over many seeds, COPY in pieces, uploads beside reads, a stop with work in flight. */
export const LONG = ['copy', 'graceful', 'heavy-work', 'recompute-changed', 'takeover-model-a', 'takeover-model-b']

/**
 * In-process files (the fast tier's) that also run on PostgreSQL: their subject is where the engines
 * differ — a pool of connections beside the embedded one-at-a-time session (concurrent writes, retried
 * writes, upload conflicts, references), COPY, locks and timeouts, LISTEN/NOTIFY (the caches), a
 * writable host among several, the server's time zone, pg-boss on each, and the totals the engine's
 * statements compute, whose plans differ (parallel, JIT) on a real server.
 */
export const ENGINE = [
  'campaign-pages',
  'database',
  'datapoints',
  'detail-cache',
  'dhis2-dated',
  'dhis2-round-trip',
  'engine',
  'faults',
  'hang-guard',
  'hardening',
  'history',
  'ingest',
  'jobs',
  'outliers',
  'parent-totals',
  'pipeline-fault',
  'read-cache',
  'references',
  'retried-writes',
  'schema-locks',
  'service',
  'submission-plans',
  'test-times',
  'timestamps',
  'upload-conflicts',
  'writable-host',
]

/**
 * Operator files whose subject is not the engine, run on the embedded database only: the CLI's
 * commands (always on a data directory), the README's and the docs' commands as a person pastes them, the sign-in
 * door and request bodies under attack, and the document checked against every answer by a
 * validating proxy. The same statements reach either
 * engine through the same driver; on PostgreSQL they ran a second time for nothing new.
 */
export const ONE_ENGINE = ['cli', 'docs-commands', 'openapi-proxy', 'readme-commands', 'sign-in', 'upload-bodies']

const path = (name) => `test/${name}.test.ts`
export const E2E = new Set([...BROWSER, ...OPERATOR, ...LONG].map(path))

const ON_POSTGRES = new Set([...OPERATOR.filter((name) => !ONE_ENGINE.includes(name)), ...LONG, ...ENGINE].map(path))

/** The files of `tier` ('fast', 'e2e', 'pg' or 'all') among `files`. */
export function inTier(tier, files) {
  if (tier === 'all') return files
  if (tier === 'pg') return files.filter((file) => ON_POSTGRES.has(file))
  return files.filter((file) => E2E.has(file) === (tier === 'e2e'))
}
