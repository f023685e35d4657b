// The national data set of the ingestion benches (bench/ingest.ts, bench/jobs.ts), seeded: a tree of
// 10,000 locations (country → 100 provinces → 9,899 districts), campaigns, 50 indicators, every code
// mapped, and a campaign CSV of `rows` rows × 20 indicator columns over it.
import http from 'node:http'
import pg from 'pg'
import { prng } from '../lib/core/prng.js'
import { doing, scratchDatabase, scratchDir, startServer, stop } from './lib.js'

export const KEY = 'f'.repeat(40)
export const LOCATIONS = 10_000
export const INDICATORS = 20
const auth = { authorization: `ApiKey admin:${KEY}` }

/** The server settings the benches start with (the admin key above, large uploads). */
export const SERVER_ENV = { ADMIN_API_KEY: KEY, MAX_UPLOAD_BYTES: String(200 * 1024 * 1024) }

export const campaignsOf = (rows: number) => Math.ceil(rows / LOCATIONS)

/**
 * API calls over node:http, which waits as long as the server works (fetch gives up on a response
 * whose headers take more than 300 s, and a full-size transform_upload can).
 */
export function apiClient(port: number) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> => {
    const payload = body ? JSON.stringify(body) : undefined
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          method,
          path: `/api/v1/${path}`,
          headers: { ...auth, ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
        },
        (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk) => (text += chunk))
          res.on('end', () => {
            if ((res.statusCode ?? 500) >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`))
            else resolve(JSON.parse(text) as Record<string, unknown>)
          })
        },
      )
      request.on('error', reject)
      request.end(payload)
    })
  }
}

/** The tree, the location caches, the campaigns a `rows`-row file needs (and one more), 50 indicators and every mapping. */
export async function seedNation(db: pg.Client, api: ReturnType<typeof apiClient>, rows: number) {
  const campaigns = campaignsOf(rows)
  await db.query(`insert into location_type (name, admin_level) values ('Country', 0), ('Province', 1), ('District', 2)`)
  await db.query(`insert into location (id, name, location_code, location_type_id, parent_location_id)
    select g, 'L' || g, 'G' || g, case when g = 1 then 1 when g <= 101 then 2 else 3 end,
           case when g = 1 then null when g <= 101 then 1 else 2 + (g % 100) end
    from generate_series(1, ${LOCATIONS}) g order by g`)
  await db.query(`select setval(pg_get_serial_sequence('location', 'id'), ${LOCATIONS})`)
  await api('GET', 'cache_meta/')
  await db.query(`insert into campaign_type (name) values ('NID')`)
  await db.query(`insert into campaign (name, campaign_type_id, start_date, end_date)
    select 'C' || g, 1, date '2016-01-01' + g * 7, date '2016-01-01' + g * 7 + 3 from generate_series(1, ${campaigns + 1}) g`)
  await db.query(`insert into indicator (name, short_name, data_format) select 'I' || g, 'I' || g, 'int' from generate_series(1, 50) g`)
  await db.query(`insert into source_object_map (content_type, source_object_code, master_object_id)
    select 'location', 'G' || g, g from generate_series(1, ${LOCATIONS}) g
    union all select 'indicator', 'I' || g, g from generate_series(1, ${INDICATORS}) g
    union all select 'campaign', 'C' || g, g from generate_series(1, ${campaigns}) g`)
}

/** The campaign CSV: campaign-major rows of 10,000 locations, 20 seeded int columns (0–999, plus `offset`: another file whose every value differs). */
export function nationalCsv(rows: number, offset = 0): Buffer {
  const random = prng(20161126)
  const header = ['campaign', 'geocode', ...Array.from({ length: INDICATORS }, (_, i) => `I${i + 1}`)]
  const lines = [header.join(',')]
  for (let r = 0; r < rows; r++) {
    const cells = [`C${Math.floor(r / LOCATIONS) + 1}`, `G${(r % LOCATIONS) + 1}`]
    for (let i = 0; i < INDICATORS; i++) cells.push(String(Math.floor(random() * 1000) + offset))
    lines.push(cells.join(','))
  }
  return Buffer.from(lines.join('\n'))
}

/**
 * The national file as a district's recount corrects it: the same lines, with one cell in every
 * `1 / share` cells given another value (share 0.01: 1 % of the cells changed), spread over every row
 * and column; share 0 is the same file again.
 */
export function correctedCsv(csv: Buffer, share: number): { csv: Buffer; changed: number } {
  const lines = csv.toString().split('\n')
  const every = share > 0 ? Math.round(1 / share) : 0
  let cell = 0
  let changed = 0
  for (let r = 1; r < lines.length && every; r++) {
    const cells = lines[r].split(',')
    for (let c = 2; c < cells.length; c++, cell++) {
      if (cell % every !== 0) continue
      cells[c] = String(Number(cells[c]) + 1)
      changed++
    }
    lines[r] = cells.join(',')
  }
  return { csv: Buffer.from(lines.join('\n')), changed }
}

/**
 * What the national benches start from: a scratch database on the server at `adminUrl`, the built
 * server on it at `port` (SERVER_ENV and `serverEnv`), a connection of its own, and the nation seeded
 * for `rows` rows; `work` runs with them, then the server stops and the database is dropped.
 */
export async function onNationalServer<T>(
  where: { adminUrl: string; name: string; port: number; rows: number; serverEnv?: Record<string, string> },
  work: (api: ReturnType<typeof apiClient>, db: pg.Client, env: Record<string, string>) => Promise<T>,
): Promise<T> {
  const scratch = await scratchDatabase(where.adminUrl, `rhizome_bench_${where.name}`)
  const env = { ...SERVER_ENV, DATABASE_URL: scratch.url, DATA_DIR: scratchDir(`rhizome-${where.name}-`), ...where.serverEnv }
  const server = await startServer(['dist/server.js'], env, where.port)
  const db = new pg.Client({ connectionString: scratch.url })
  await db.connect()
  const api = apiClient(where.port)
  try {
    doing('seeding the nation')
    await seedNation(db, api, where.rows)
    return await work(api, db, env)
  } finally {
    await db.end()
    await stop(server)
    await scratch.close()
  }
}
