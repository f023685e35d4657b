// `npm run bench:tree` (PostgreSQL, Chromium): the demo country grown to a tree of 100,000 locations
// (country → 30 provinces → 300 districts → 97,000 health areas), then measured where a tree's size
// shows: the closure table `location_tree` (its rows and bytes, and its rebuild by `cache_meta`), a
// location added through the API, a province's subtree read through the API (its locations and its
// values, cache missed), and in the page (Debian's Chromium through playwright-core, as the tests):
// signing in (the app reads every location once), a district picked by typing, data entry for one
// health area (a value typed until its cell says Saved), and a province's health areas in the data
// browser. Page times are medians of BENCH_RUNS runs (default 5) with their range; the run exits 1 when
// a median passes its target (1 s in the page, 100 ms for the API's subtree reads).
// BENCH_DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); a scratch
// database is created and dropped (BENCH_KEEP=1 keeps it).
import { execFileSync } from 'node:child_process'
import { chromium, type Page } from 'playwright-core'
import pg from 'pg'
import { CHROMIUM } from '../test/chromium.js'
import { ADMIN_URL, doing, median, onStop, scratchDatabase, scratchDir, startServer, stop } from './lib.js'

const KEY = 'd'.repeat(40)
const PASSWORD = 'bench-password-1'
const runs = Number(process.env.BENCH_RUNS ?? 5)
const port = 4013
const base = `http://127.0.0.1:${port}`
const PROVINCES = 30
const DISTRICTS_PER_PROVINCE = 10
const HEALTH_AREAS = 97_000

/** The API with the admin key (`no-cache`: every read computed, not served from the read cache): the body, and the time it took. */
async function call(path: string, init: RequestInit = {}) {
  const started = performance.now()
  const res = await fetch(`${base}/api/v1${path}`, {
    ...init,
    headers: { authorization: `ApiKey admin:${KEY}`, 'content-type': 'application/json', 'cache-control': 'no-cache', ...init.headers },
  })
  if (res.status >= 400) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`)
  const body = await res.json()
  return { body, ms: performance.now() - started }
}

const failures: string[] = []
const figure = (values: number[]) => `${Math.round(median(values))} ms (${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))})`
/** Prints a measurement and notes a median past its target. */
function report(what: string, values: number[], targetMs: number) {
  console.log(`${what}: ${figure(values)} (target ${targetMs} ms)`)
  if (median(values) > targetMs) failures.push(`${what}: ${Math.round(median(values))} ms > ${targetMs} ms`)
}

/** Rows and bytes of the closure table, beside the locations'. */
async function treeSize(db: pg.Client) {
  const { rows } = await db.query(`select (select count(*) from location)::int as locations, (select count(*) from location_tree)::int as tree_rows,
    pg_total_relation_size('location_tree')::bigint as tree_bytes, pg_total_relation_size('location')::bigint as location_bytes`)
  return rows[0] as { locations: number; tree_rows: number; tree_bytes: string; location_bytes: string }
}
const sizeLine = (s: Awaited<ReturnType<typeof treeSize>>) =>
  `${s.locations.toLocaleString('en')} locations (${Math.round(Number(s.location_bytes) / 1e6)} MB), location_tree ${s.tree_rows.toLocaleString('en')} rows (${(s.tree_rows / s.locations).toFixed(1)} a location, ${Math.round(Number(s.tree_bytes) / 1e6)} MB)`

/** The demo's tree grown by SQL to 100,000 locations; the closure table then rebuilt by the API's cache_meta. */
async function grow(db: pg.Client) {
  const { rows } = await db.query(`select id from location where parent_location_id is null`)
  const country = rows[0].id as number
  const types = await db.query(`insert into location_type (name, admin_level) values ('Health area', 3) returning id`)
  const healthArea = types.rows[0].id as number
  const typeOf = async (name: string) => (await db.query(`select id from location_type where name = $1`, [name])).rows[0].id as number
  const [province, district] = [await typeOf('Province'), await typeOf('District')]
  await db.query(
    `insert into location (name, location_code, location_type_id, parent_location_id)
     select 'Province ' || p, 'BP' || p, $1, $2 from generate_series(1, $3::int - (select count(*) from location where location_type_id = $1)::int) p`,
    [province, country, PROVINCES],
  )
  await db.query(
    `insert into location (name, location_code, location_type_id, parent_location_id)
     select p.name || ' district ' || d, p.location_code || '-D' || d, $1, p.id
     from location p, generate_series(1, $2::int) d
     where p.location_type_id = $3 and p.location_code like 'BP%'`,
    [district, DISTRICTS_PER_PROVINCE, province],
  )
  await db.query(
    `with districts as (select id, location_code, row_number() over (order by id) - 1 as n, count(*) over () as total from location where location_type_id = $1)
     insert into location (name, location_code, location_type_id, parent_location_id)
     select 'Health area ' || h, 'HA' || h, $2, d.id from generate_series(0, $3::int - 1) h join districts d on d.n = h % d.total`,
    [district, healthArea, HEALTH_AREAS],
  )
}

/** From a click or a key to what it shows, in the page's own clock. */
async function inPage(page: Page, act: () => Promise<unknown>, shown: () => Promise<unknown>) {
  const started = await page.evaluate(() => performance.now())
  await act()
  await shown()
  return (await page.evaluate(() => performance.now())) - started
}

const scratch = await scratchDatabase(ADMIN_URL, 'rhizome_tree')
const dataDir = scratchDir('rhizome-bench-tree-')
doing('loading the demo data (npm run cli -- demo)')
execFileSync(process.execPath, ['cli/run.mjs', 'demo'], {
  env: { ...process.env, DATABASE_URL: scratch.url, DATA_DIR: dataDir, ADMIN_API_KEY: KEY },
  stdio: 'ignore',
})
const server = await startServer(['dist/server.js'], { DATABASE_URL: scratch.url, DATA_DIR: dataDir, ADMIN_API_KEY: KEY, DEMO_DATA: '0' }, port)
const db = new pg.Client({ connectionString: scratch.url })
await db.connect()
onStop(() => db.end())
doing('starting Chromium')
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
  handleSIGINT: false,
  handleSIGTERM: false,
  handleSIGHUP: false,
})
onStop(() => browser.close())
try {
  console.log(`the demo: ${sizeLine(await treeSize(db))}`)
  doing(`growing the tree to ${(PROVINCES * (1 + DISTRICTS_PER_PROVINCE) + HEALTH_AREAS).toLocaleString('en')} locations`)
  await grow(db)
  const rebuilt = await call('/cache_meta/')
  await db.query('vacuum analyze location, location_tree')
  console.log(`cache_meta's rebuild of location_tree: ${Math.round(rebuilt.ms)} ms for ${rebuilt.body.objects[0].location_tree_rows.toLocaleString('en')} rows`)
  console.log(`grown: ${sizeLine(await treeSize(db))}`)

  doing('the API: a location added, a province’s subtree read')
  const ids = async (where: string) => (await db.query(`select id from location where ${where} order by id`)).rows.map((r) => r.id as number)
  const [aProvince] = await ids(`location_code = 'BP10'`)
  const [aDistrict] = await ids(`location_code = 'BP10-D3'`)
  const healthAreaType = (await db.query(`select id from location_type where name = 'Health area'`)).rows[0].id as number
  const added: number[] = []
  for (let run = 0; run < runs; run++) {
    const made = await call('/location/', {
      method: 'POST',
      body: JSON.stringify({ name: `Bench area ${run}`, location_code: `BENCH${run}`, location_type_id: healthAreaType, parent_location_id: aDistrict }),
    })
    added.push(made.ms)
  }
  report('a health area added through the API (its closure rows with it)', added, 100)
  const { rows: campaigns } = await db.query(`select id from campaign order by start_date desc limit 1`)
  const { rows: indicators } = await db.query(`select id from indicator where short_name = 'Children missed'`)
  // Values at a health area per district of the province, so that the read has rows to answer.
  const someAreas = await ids(
    `location_type_id = ${healthAreaType} and parent_location_id in (select id from location where parent_location_id = ${aProvince}) and id % 7 = 0`,
  )
  for (const [i, id] of someAreas.entries())
    await call('/campaign_datapoint/', {
      method: 'POST',
      body: JSON.stringify({ indicator_id: indicators[0].id, location_id: id, campaign_id: campaigns[0].id, value: i % 50 }),
    })
  const subtree = []
  const values = []
  let areas = 0
  let valueRows = 0
  for (let run = 0; run < runs; run++) {
    const read = await call(`/location/?location_id=${aProvince}&location_type=Health%20area&limit=0`)
    subtree.push(read.ms)
    areas = read.body.objects.length
    const valueRead = await call(
      `/campaign_datapoint/?location_id=${aProvince}&location_type=Health%20area&indicator__in=${indicators[0].id}&campaign__in=${campaigns[0].id}&limit=0`,
    )
    values.push(valueRead.ms)
    valueRows = valueRead.body.objects.length
  }
  report(`a province's ${areas.toLocaleString('en')} health areas (location/?location_id&location_type), cache missed`, subtree, 100)
  report(`their values (campaign_datapoint/, ${valueRows} rows), cache missed`, values, 100)

  doing(`the page: signing in, a district by typing, data entry, the data browser; ${runs} run(s)`)
  const admin = (await call('/user/?username=admin')).body.objects[0]
  await call(`/user/${admin.id}/`, { method: 'PATCH', body: JSON.stringify({ password: PASSWORD }) })
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(e.message))
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()))
  const signIns = []
  const typed = []
  const entries = []
  const browsed = []
  for (let run = 0; run < runs; run++) {
    await page.context().clearCookies()
    await page.goto(`${base}/app/`)
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill(PASSWORD)
    signIns.push(
      await inPage(
        page,
        () => page.getByRole('button', { name: 'Sign in' }).click(),
        () => page.getByRole('heading', { name: 'Dashboards' }).waitFor({ timeout: 60_000 }),
      ),
    )
    await page.getByRole('link', { name: 'Data', exact: true }).click()
    const search = page.getByRole('combobox', { name: 'Location' })
    await search.fill('')
    typed.push(
      await inPage(
        page,
        () => search.pressSequentially('Province 10 district 3'),
        () => page.getByRole('option', { name: /› Province 10 district 3$/ }).waitFor(),
      ),
    )
    // The data browser: the province, then its health areas two levels down.
    await search.fill('Province 10')
    await page.getByRole('option', { name: /› Province 10$/ }).click()
    await page.getByText(/^Rows 1–/).waitFor({ timeout: 60_000 })
    browsed.push(
      await inPage(
        page,
        () => page.getByLabel('Depth').selectOption({ label: 'Two levels down' }),
        () => page.getByText(/^Rows 1–50 of /).waitFor({ timeout: 60_000 }),
      ),
    )
    const area = someAreas[run % someAreas.length]
    await page.goto(`${base}/app/#/entry?campaign=${campaigns[0].id}&location=${area}`)
    const cell = page.locator('input.entry-value').first()
    await cell.waitFor({ timeout: 60_000 })
    const state = page.locator(`#${await cell.getAttribute('id')}-state`)
    entries.push(
      await inPage(
        page,
        async () => {
          await cell.fill(String(100 + run))
          await cell.press('Enter')
        },
        () => state.filter({ hasText: /^Saved$/ }).waitFor(),
      ),
    )
  }
  report('signed in: the dashboards page, every location read', signIns, 1000)
  report('a district picked by typing (its name typed key by key, to the match listed)', typed, 1000)
  report('data entry at one health area: a value typed and Enter, to its cell saying Saved', entries, 1000)
  report("the data browser: a province's health areas (two levels down), to their first page", browsed, 1000)
  const heap = await page.evaluate(() => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0)
  console.log(`the page's JavaScript heap: ${Math.round(heap / 1e6)} MB`)
  if (problems.length) failures.push(`console: ${problems.join('; ')}`)
} finally {
  await browser.close()
  await db.end()
  await stop(server)
  await scratch.close()
}
if (failures.length) {
  console.log(`FAILED:\n${failures.join('\n')}`)
  process.exit(1)
}
