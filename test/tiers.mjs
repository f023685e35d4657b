// Which test files run in which tier (test/run.mjs; test/README.md, "Tiers"):
//   `npm test`          every file not named below: the API, the engine and the modules, in the test's
//                       process on the embedded database;
//   `npm run test:e2e`  the files below, on the embedded database;
//   `npm run test:pg`   every file but the browser pages, on the PostgreSQL server of DATABASE_URL: the
//                       pages call the same API, whose every route the other files run on PostgreSQL, and
//                       the pages themselves do not see the engine (docs/decisions.md, "Test tiers").
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

/** The server, its workers and the CLI as separate processes, and extra database servers and nginx (test/processes.ts, test/topology.ts). */
export const OPERATOR = [
  'backup',
  'bench-stop',
  'campaign-locks',
  'cli',
  'database-loss',
  'db-thread',
  'failover',
  'job-workers',
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

const path = (name) => `test/${name}.test.ts`
export const E2E = new Set([...BROWSER, ...OPERATOR, ...LONG].map(path))

const PAGES = new Set(BROWSER.map(path))

/** The files of `tier` ('fast', 'e2e', 'pg' or 'all') among `files`. */
export function inTier(tier, files) {
  if (tier === 'all') return files
  if (tier === 'pg') return files.filter((file) => !PAGES.has(file))
  return files.filter((file) => E2E.has(file) === (tier === 'e2e'))
}
