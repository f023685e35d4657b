// Upgrades keep data: a database made by the first release (the schema of sql/001_init.sql, its rows
// written as that release wrote them) is opened by today's server, which applies every later migration:
// every row is kept, every read answers, and the engine works on what it found.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite as PGlite17 } from 'pglite-pg17'
import t from 'tap'
import { Migrator, sql, type Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import { buildApp } from '../app.js'
import { hashKey } from '../lib/data/auth.js'
import { migrateToLatest, SQL_DIR } from '../lib/data/migrations.js'
import { createDatabase, type Database } from '../lib/data/database.js'
import { cli, startServer, until200 } from './processes.js'
import { ROOT, emptyDatabase } from './helper.js'

type Row = Record<string, unknown>

/** The superuser key test/fixtures/make-pglite17-data-dir.ts gave `admin` in the PostgreSQL 17 fixture. */
const FIXTURE_KEY = 'f'.repeat(40)

const ADMIN_KEY = 'f'.repeat(40)
const FIELD_KEY = '9'.repeat(40)

/** The first release's rows: users and keys, a tree, a campaign, indicators and a ratio, an upload and its values, a chart. */
const FIRST_RELEASE_ROWS = `
  INSERT INTO auth_user (username, is_superuser) VALUES ('admin', true), ('field', false);
  INSERT INTO api_key (user_id, key_hash) VALUES (1, '${hashKey(ADMIN_KEY)}'), (2, '${hashKey(FIELD_KEY)}');
  INSERT INTO location_type (name, admin_level) VALUES ('Country', 0), ('Province', 1), ('District', 2);
  INSERT INTO location (name, location_code, location_type_id, parent_location_id) VALUES
    ('Veridia', 'VER', 1, NULL), ('North', 'N', 2, 1), ('South', 'S', 2, 1), ('Alder', 'N1', 3, 2), ('Birch', 'S1', 3, 3);
  INSERT INTO location_tree (parent_location_id, location_id, lvl) VALUES
    (1, 1, 0), (2, 2, 0), (3, 3, 0), (4, 4, 0), (5, 5, 0), (1, 2, 1), (1, 3, 1), (2, 4, 1), (3, 5, 1), (1, 4, 2), (1, 5, 2);
  INSERT INTO location_permission (user_id, top_lvl_location_id) VALUES (2, 2);
  INSERT INTO campaign_type (name) VALUES ('NID');
  INSERT INTO campaign (name, campaign_type_id, start_date, end_date) VALUES ('March', 1, '2016-03-01', '2016-03-05');
  INSERT INTO indicator (short_name, name, data_format) VALUES ('missed', 'Children missed', 'int'), ('seen', 'Children seen', 'int'),
    ('pct_missed', 'Percent missed', 'pct');
  INSERT INTO calculated_indicator_component (indicator_id, indicator_component_id, calculation) VALUES (3, 1, 'NUMERATOR'), (3, 2, 'DENOMINATOR');
  INSERT INTO custom_chart (uuid, title, chart_json) VALUES ('c-1', 'Missed', '{"type": "ColumnChart", "indicator_ids": [1]}');
  INSERT INTO custom_dashboard (title, rows) VALUES ('Campaign', '[{"charts": ["c-1"]}]');
  INSERT INTO source_doc (doc_title, file_type, docfile, guid, created_by_id) VALUES ('march.csv', 'campaign', 'documents/2016/03/06/x.csv', 'x', 1);
  INSERT INTO source_submission (document_id, instance_guid, row_number, location_code, campaign_code, submission_json, process_status) VALUES
    (2, 'N1March', 0, 'N1', 'March', '{"geocode": "N1", "campaign": "March", "missed": 5, "seen": 100}', 'PROCESSED'),
    (2, 'S1March', 1, 'S1', 'March', '{"geocode": "S1", "campaign": "March", "missed": 15, "seen": 100}', 'PROCESSED');
  INSERT INTO source_object_map (content_type, source_object_code, master_object_id) VALUES
    ('location', 'N1', 4), ('location', 'S1', 5), ('campaign', 'March', 1), ('indicator', 'missed', 1), ('indicator', 'seen', 2);
  INSERT INTO doc_object_map (document_id, source_object_map_id) SELECT 2, id FROM source_object_map;
  INSERT INTO datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at) VALUES
    (1, 4, 1, 5, 1, '4_1_1', now()), (2, 4, 1, 100, 1, '4_2_1', now()), (1, 5, 1, 15, 2, '5_1_1', now()), (2, 5, 1, 100, 2, '5_2_1', now());
  INSERT INTO datapoint_with_computed (indicator_id, location_id, campaign_id, value) VALUES
    (1, 4, 1, 5), (2, 4, 1, 100), (1, 5, 1, 15), (2, 5, 1, 100), (3, 4, 1, 0.05), (3, 5, 1, 0.15);
`

/** Applies only the first release's migration (the files after it did not exist yet). */
async function firstRelease(database: Database) {
  const { db } = database
  const script = readFileSync(join(SQL_DIR, '001_init.sql'), 'utf8')
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db)
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ '001_init': { up: (trx) => database.execScript(trx, script) } }) },
    migrationTableSchema: rows[0].schema,
  })
  const { error } = await migrator.migrateToLatest()
  if (error) throw error
}

async function rowCounts(db: Kysely<DB>, tables: string[]) {
  const counts: Record<string, number> = {}
  for (const table of tables) counts[table] = Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0].n)
  return counts
}

t.test("a database of the first release, opened by today's server: every row kept, every read answers", async (t) => {
  const database = await emptyDatabase()
  t.teardown(() => database.close())
  const { db } = database
  await firstRelease(database)
  for (const statement of FIRST_RELEASE_ROWS.split(';\n').filter((s) => s.trim())) await sql.raw(statement).execute(db)
  const { rows: tableRows } = await sql<{ name: string }>`select tablename as name from pg_tables
    where schemaname = current_schema() and tablename not like 'kysely_%' order by 1`.execute(db)
  const tables = tableRows.map((r) => r.name)
  const before = await rowCounts(db, tables)
  t.equal(before.datapoint, 4)

  const applied = await migrateToLatest(database)
  t.ok(applied.length >= 11, `${applied.length} migrations applied: ${applied.join(', ')}`)
  t.same(await rowCounts(db, tables), before, `every row of ${tables.length} tables kept`)

  const app = await buildApp({ database, logger: false, config: { DATA_DIR: join(ROOT, '.data', 'test'), MAX_EVENT_LOOP_DELAY_MS: 0 } })
  t.teardown(() => app.close())
  await app.ready()
  const get = (path: string, key = `admin:${ADMIN_KEY}`) => app.inject({ url: `/api/v1${path}`, headers: { authorization: `ApiKey ${key}` } })
  const listing = (await get('/')).json() as Record<string, { list_endpoint: string }>
  for (const [name, { list_endpoint }] of Object.entries(listing)) {
    const res = await app.inject({ url: list_endpoint, headers: { authorization: `ApiKey admin:${ADMIN_KEY}` } })
    // A list that needs a parameter says so; nothing fails.
    t.ok(res.statusCode === 200 || (res.statusCode === 400 && res.json().code === 'MISSING_REQUIRED_PARAMETER'), `${name}: ${res.statusCode}`)
  }
  const values = await get('/campaign_datapoint/?indicator__in=1,2,3&campaign__in=1&location_id__in=4,5')
  t.same(
    (values.json().objects as Array<{ location_id: number; indicator_id: number; value: number }>).map((o) => [o.location_id, o.indicator_id, o.value]).sort(),
    [
      [4, 1, 5],
      [4, 2, 100],
      [4, 3, 0.05],
      [5, 1, 15],
      [5, 2, 100],
      [5, 3, 0.15],
    ],
  )
  t.match((await get('/dashboard/1/')).json(), { title: 'Campaign', owner_id: 1 }, 'the first superuser owns what had no owner')
  const field = await get('/campaign_datapoint/?indicator__in=1&campaign__in=1&location_id__in=4,5', `field:${FIELD_KEY}`)
  t.same(
    field.json().objects.map((o: { location_id: number }) => o.location_id),
    [4],
    "the restricted user's responsibility still holds",
  )

  // The engine on what it found: a recompute aggregates up the tree; a revert of the old upload
  // changes nothing it has no history for, and says so.
  const recomputed = await get('/agg_refresh/?campaign_id=1')
  t.equal(recomputed.statusCode, 200, recomputed.body)
  const national = await get('/campaign_datapoint/?indicator__in=1,3&campaign__in=1&location_id__in=1')
  t.same(
    national.json().objects.map((o: { indicator_id: number; value: number }) => [o.indicator_id, o.value]),
    [
      [1, 20],
      [3, 0.1],
    ],
  )
  const revert = await get('/revert_document/?document_id=2')
  t.equal(revert.statusCode, 200, revert.body)
  t.match(revert.json().objects[0], { restored: { count: 0 }, deleted: { count: 0 }, without_history: 4 })
  t.equal(Number((await sql<{ n: number }>`select count(*) as n from datapoint`.execute(db)).rows[0].n), 4)
})

/**
 * A first-release database of a country's size in its own schema: 1,000 districts under 10 provinces,
 * 12 campaigns, a submission per district and campaign, two raw indicators and their ratio, its values
 * at the districts and every level's totals as that release's engine stored them.
 */
const FILLED_FIRST_RELEASE = `
  INSERT INTO auth_user (username, is_superuser) VALUES ('admin', true);
  INSERT INTO api_key (user_id, key_hash) VALUES (1, '${hashKey(ADMIN_KEY)}');
  INSERT INTO location_type (name, admin_level) VALUES ('Country', 0), ('Province', 1), ('District', 2);
  INSERT INTO location (name, location_code, location_type_id, parent_location_id) VALUES ('Veridia', 'VER', 1, NULL);
  INSERT INTO location (name, location_code, location_type_id, parent_location_id) SELECT 'Province ' || p, 'P' || p, 2, 1 FROM generate_series(1, 10) p;
  INSERT INTO location (name, location_code, location_type_id, parent_location_id)
    SELECT 'District ' || d, 'D' || d, 3, 2 + d % 10 FROM generate_series(1, 1000) d;
  INSERT INTO location_tree (parent_location_id, location_id, lvl)
    SELECT id, id, 0 FROM location
    UNION ALL SELECT parent_location_id, id, 1 FROM location WHERE parent_location_id IS NOT NULL
    UNION ALL SELECT 1, id, 2 FROM location WHERE location_type_id = 3;
  INSERT INTO campaign_type (name) VALUES ('NID');
  INSERT INTO campaign (name, campaign_type_id, start_date, end_date)
    SELECT 'Round ' || c, 1, date '2016-01-01' + (c * 30), date '2016-01-05' + (c * 30) FROM generate_series(1, 12) c;
  INSERT INTO indicator (short_name, name, data_format) VALUES ('missed', 'Children missed', 'int'), ('seen', 'Children seen', 'int'),
    ('pct_missed', 'Percent missed', 'pct');
  INSERT INTO calculated_indicator_component (indicator_id, indicator_component_id, calculation) VALUES (3, 1, 'NUMERATOR'), (3, 2, 'DENOMINATOR');
  INSERT INTO source_doc (doc_title, file_type, docfile, guid, created_by_id) VALUES ('rounds.csv', 'campaign', 'documents/2016/rounds.csv', 'r', 1);
  INSERT INTO source_submission (document_id, instance_guid, row_number, location_code, campaign_code, submission_json, process_status)
    SELECT 2, l.location_code || '-' || c.id, row_number() OVER (ORDER BY c.id, l.id), l.location_code, c.name,
      json_build_object('geocode', l.location_code, 'campaign', c.name, 'missed', l.id % 50, 'seen', 500 + l.id % 300)::jsonb, 'PROCESSED'
    FROM location l CROSS JOIN campaign c WHERE l.location_type_id = 3;
  INSERT INTO datapoint (indicator_id, location_id, campaign_id, value, source_submission_id, unique_index, precedence_at)
    SELECT i, l.id, c.id, CASE i WHEN 1 THEN l.id % 50 + c.id ELSE 500 + l.id % 300 END, s.id, l.id || '_' || i || '_' || c.id, now()
    FROM location l CROSS JOIN campaign c CROSS JOIN generate_series(1, 2) i
    JOIN source_submission s ON s.instance_guid = l.location_code || '-' || c.id
    WHERE l.location_type_id = 3;
  INSERT INTO agg_datapoint (indicator_id, location_id, campaign_id, value, is_raw)
    SELECT d.indicator_id, t.parent_location_id, d.campaign_id, sum(d.value), t.lvl = 0
    FROM datapoint d JOIN location_tree t ON t.location_id = d.location_id GROUP BY 1, 2, 3, t.lvl = 0;
  INSERT INTO datapoint_with_computed (indicator_id, location_id, campaign_id, value)
    SELECT indicator_id, location_id, campaign_id, value FROM agg_datapoint
    UNION ALL SELECT 3, m.location_id, m.campaign_id, m.value / s.value
    FROM agg_datapoint m JOIN agg_datapoint s USING (location_id, campaign_id) WHERE m.indicator_id = 1 AND s.indicator_id = 2;
`

/** Each value table's rows, and its values' sum and sum of squares per campaign: what an upgrade must keep. */
async function valuesOf(db: Kysely<DB>) {
  const found: Record<string, unknown> = await rowCounts(db, ['datapoint', 'agg_datapoint', 'datapoint_with_computed', 'source_submission'])
  for (const table of ['datapoint', 'agg_datapoint', 'datapoint_with_computed']) {
    const { rows } = await sql<{ campaign_id: number; total: number; squares: number }>`select campaign_id, sum(value)::float8 as total,
      sum(value * value)::float8 as squares from ${sql.table(table)} group by campaign_id order by campaign_id`.execute(db)
    found[`${table} by campaign`] = rows.map((r) => [r.campaign_id, Number(r.total.toPrecision(12)), Number(r.squares.toPrecision(12))])
  }
  return found
}

t.test("a filled first-release database (a country's 12 rounds), migrated: every row and every campaign's sums kept", async (t) => {
  const database = await emptyDatabase()
  t.teardown(() => database.close())
  const { db } = database
  await firstRelease(database)
  await sql.raw(FILLED_FIRST_RELEASE).execute(db)
  const before = await valuesOf(db)
  t.equal(before.datapoint, 24_000, '24,000 raw values at 1,000 districts over 12 campaigns')
  t.equal(before.datapoint_with_computed, 12 * 1011 * 3, 'every level’s totals and ratios')

  const applied = await migrateToLatest(database)
  t.ok(applied.length >= 30, `${applied.length} migrations applied`)
  t.same(await valuesOf(db), before, 'every value table’s rows, and each campaign’s sum and sum of squares, as before')

  // The engine on the upgraded rows: a round recomputed gives back the totals the first release stored.
  const app = await buildApp({ database, logger: false, config: { DATA_DIR: join(ROOT, '.data', 'test'), MAX_EVENT_LOOP_DELAY_MS: 0 } })
  t.teardown(() => app.close())
  await app.ready()
  const get = (path: string) => app.inject({ url: `/api/v1${path}`, headers: { authorization: `ApiKey admin:${ADMIN_KEY}` } })
  const country = async () =>
    (await get('/campaign_datapoint/?indicator__in=1,2,3&campaign__in=7&location_id__in=1')).json().objects.map((o: Row) => [o.indicator_id, o.value])
  const stored = await country()
  t.equal(stored.length, 3, 'the country’s two totals and its ratio, read through the API')
  const recomputed = await get('/agg_refresh/?campaign_id=7')
  t.equal(recomputed.statusCode, 200, recomputed.body)
  t.same(await country(), stored, 'recomputed by today’s engine: the same totals and ratio')
})

t.test(
  'a data directory written by PGlite 0.4 (PostgreSQL 17): the server says what to do, upgrade-data-dir moves every row, the server then answers as before',
  { skip: !!process.env.DATABASE_URL && 'embedded database only' },
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-pg17-'))
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
    // The fixture made by the old PGlite (test/fixtures/make-pglite17-data-dir.ts), unpacked by it as it would have written it.
    const old = await PGlite17.create({
      dataDir: join(dataDir, 'pglite'),
      loadDataDir: new Blob([readFileSync(join(ROOT, 'test/fixtures/pglite17-data-dir.tar.gz'))]),
    })
    const rowsBefore = await old.query<{ n: number }>(`select count(*)::int as n from datapoint_with_computed`)
    await old.close()
    const env = { DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_API_KEY: '', DEMO_DATA: '0' }

    const refused = await startServer(t, env)
    const exitCode = await new Promise<number | null>((resolve) => refused.child.once('exit', (code) => resolve(code)))
    t.equal(exitCode, 1, 'the server does not start on it')
    t.match(refused.output(), /holds a PostgreSQL 17 database.*this version runs PostgreSQL 18.*npm run cli -- upgrade-data-dir/s, 'and says what to do')

    const upgraded = await cli(['upgrade-data-dir'], env)
    t.equal(upgraded.code, 0, upgraded.stderr)
    t.match(upgraded.stdout, /\d+ rows copied into a PostgreSQL 18 database/)
    t.ok(existsSync(join(dataDir, 'pglite-pg17', 'PG_VERSION')), 'the old directory is kept beside it')
    t.equal(readFileSync(join(dataDir, 'pglite', 'PG_VERSION'), 'utf8').trim(), '18')
    t.equal((await cli(['upgrade-data-dir'], env)).code, 0, 'a second run finds nothing to do')

    const server = await startServer(t, env)
    await until200(server, '/health/ready')
    const admin = { authorization: `ApiKey admin:${FIXTURE_KEY}` }
    const read = async (path: string) =>
      (await (await fetch(`${server.url}/api/v1${path}`, { headers: admin })).json()) as { objects: Row[]; meta: { total_count: number } }
    t.equal((await read('/campaign/')).meta.total_count, 3, "the old key works, and the demo's campaigns are there")
    t.equal((await read('/location/?limit=0')).objects.length, 13)
    const values = await read('/campaign_datapoint/?indicator__in=4&campaign__in=1&location_id=1&location_depth=1')
    t.equal(values.objects.length, 3, "a calculated indicator's values per province, as before")
    const created = await fetch(`${server.url}/api/v1/campaign_type/`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: '{"name":"after"}',
    })
    t.equal(created.status, 201, 'sequences continue after the copied rows')
    const dashboards = await read('/dashboard/')
    t.equal(dashboards.meta.total_count, 1)
    await server.stop()
    const reopened = await createDatabase({ dataDir: join(dataDir, 'pglite') })
    t.equal(
      (await sql<{ n: number }>`select count(*)::int as n from datapoint_with_computed`.execute(reopened.db)).rows[0].n,
      rowsBefore.rows[0].n,
      'every value row',
    )
    t.ok((await sql`select 1 from kysely_migration where name like '014%'`.execute(reopened.db)).rows.length, 'and the migrations after 013 applied')
    await reopened.close()
  },
)
