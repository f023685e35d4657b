// The two datapoint reads of `npm run bench:reads`, and the statements the API sends for each, run
// directly through pg. Shared by bench/reads.ts (the direct side) and bench/bare-reads.ts (the
// reference server: the same statements behind a bare Fastify route).
import pg from 'pg'

export const INDICATORS = 20
const LOCATIONS = 10_000
const CAMPAIGNS = 5
/** The application_name of the reference server's pool, so its backends' page faults are told apart. */
export const BARE_APPLICATION = 'bench-bare'

export interface Read {
  name: string
  path: string
  /**
   * The statements the API runs for this read, run directly through pg (same order and overlap), and
   * nothing else: the result as pg gives it, with the page's objects as JSON text and their count
   * derived on demand (outside the timed part).
   */
  run: (db: pg.Pool) => Promise<{ objects: () => string; count: () => number }>
  /** The same answer from the best statements written by hand (the floor the API's are measured against); its row count. */
  floor: (db: pg.Pool) => Promise<number>
}

// The statements as the API sends them (copied from the server's statement log): the same text, the
// same parameters, as named prepared statements on connections with the server's session settings
// (lib/data/database.ts), so PostgreSQL does the same work for both sides.
// The location selection (lib/api/location-selection.ts): `lvl` under a root; whether it holds anything
// is asked first (the district fallback otherwise), then it is a plain subquery of the read.
// `$first` numbers its two parameters (root, depth).
const selection = (first: number) => `select location_id as id from location_tree where parent_location_id = $${first} and lvl = $${first + 1}`
const found = `select exists (${selection(1)}) as found`
const campaignPage = `with p as ((select "t"."id" as "id", "t"."indicator_id" as "indicator_id", "t"."campaign_id" as "campaign_id", "t"."location_id" as "location_id", "t"."value" as "value", count(*) over () as "__total" from "datapoint_with_computed" as "t" where "t"."indicator_id" = any($1::int4[]) and "t"."campaign_id" = any($2::int4[]) and t.location_id in (select id from (${selection(3)}) s) order by "t"."id" asc limit $5 offset $6))
    select (select coalesce(json_agg(o), '[]')::text from (select p."id", p."indicator_id", p."campaign_id", p."location_id", case when p."value" in ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8) then null else p."value" end as "value" from p) o) as objects,
           (select max(__total) from p) as total`
const selectedIds = `select json_agg(distinct id order by id)::text as ids from (${selection(1)}) s where id is not null`
const groupedPage = `with targets as materialized (select id from (${selection(1)}) s) select page.*, meta.__targets
      from (select json_agg(distinct id order by id) as __targets from targets where id is not null) meta
      left join (select *, count(*) over () as __total from (select d.indicator_id, lt.parent_location_id as location_id, to_char(d.data_date, 'YYYYQ') as time_grouping, sum(d.value) as value
    from ((select "t"."indicator_id", "t"."location_id", "t"."data_date", "t"."value" from "datapoint" as "t" where t.data_date is not null and "t"."indicator_id" = any($3::int4[]) and t.value is not null and t.value not in ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8))) d join location_tree lt on lt.location_id = d.location_id
    where lt.parent_location_id in (select id from targets)
    group by d.indicator_id, lt.parent_location_id, 3) g
    order by time_grouping, location_id, indicator_id limit $4 offset $5) page on true`

// The floor: the best statements written by hand for the same answer (the same page of rows in the same
// order, the same count, the same meta ids), knowing the selection is a depth under a root. The page
// joins location_tree directly; its ids need no de-duplication (location_tree's key).
const handCampaignPage = `with p as (select t.id, t.indicator_id, t.campaign_id, t.location_id, t.value, count(*) over () as total
    from datapoint_with_computed t join location_tree lt on lt.location_id = t.location_id
    where t.indicator_id = $1 and t.campaign_id = $2 and lt.parent_location_id = $3 and lt.lvl = $4
    order by t.id limit $5)
  select (select coalesce(json_agg(o), '[]')::text from (select id, indicator_id, campaign_id, location_id, value from p) o) as objects,
         (select max(total) from p) as total`
const handIds = `select json_agg(location_id order by location_id)::text as ids from location_tree where parent_location_id = $1 and lvl = $2`
const handGrouped = `select d.indicator_id, lt.parent_location_id as location_id, to_char(d.data_date, 'YYYYQ') as time_grouping, sum(d.value) as value, count(*) over () as total
    from datapoint d join location_tree lt on lt.location_id = d.location_id
    where lt.parent_location_id = $1 and d.indicator_id = $2 and d.data_date is not null and d.value is not null
      and d.value not in ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)
    group by 1, 2, 3 order by 3, 2, 1 limit $3`

export const reads: Read[] = [
  {
    name: 'campaign_datapoint: 1 indicator, 1 campaign, root, depth 2',
    path: '/api/v1/campaign_datapoint/?indicator__in=7&campaign__in=3&location_id=1&location_depth=2',
    run: async (db) => {
      // Whether the selection holds anything, then the page's objects as one JSON text (lib/api/crud.ts
      // listPage) and, on a second connection at the same time, the ids for meta.
      await db.query({ name: 'selection-found', text: found, values: [1, 2] })
      const [page] = await Promise.all([
        db.query({ name: 'campaign-page', text: campaignPage, values: [[7], [3], 1, 2, 1000, 0] }),
        db.query({ name: 'selected-ids', text: selectedIds, values: [1, 2] }),
      ])
      const objects: string = page.rows[0].objects
      return { objects: () => objects, count: () => (JSON.parse(objects) as unknown[]).length }
    },
    floor: async (db) => {
      const [page] = await Promise.all([
        db.query({ name: 'hand-campaign-page', text: handCampaignPage, values: [7, 3, 1, 2, 1000] }),
        db.query({ name: 'hand-ids', text: handIds, values: [1, 2] }),
      ])
      return (JSON.parse(page.rows[0].objects) as unknown[]).length
    },
  },
  {
    name: 'date_datapoint: grouped by quarter over a province',
    path: `/api/v1/date_datapoint/?indicator__in=${INDICATORS + 1}&group_by_time=quarter&location_id=42`,
    run: async (db) => {
      // Whether the selection holds anything, then one statement: the targets (materialized once), one
      // page of the sums and the targets for meta.
      await db.query({ name: 'selection-found', text: found, values: [42, 0] })
      const { rows } = await db.query({ name: 'grouped-page', text: groupedPage, values: [42, 0, [INDICATORS + 1], 1000, 0] })
      const objects = () => rows.filter((r) => r.__total !== null).map(({ __total, __targets, ...row }) => row)
      return { objects: () => JSON.stringify(objects()), count: () => objects().length }
    },
    // Depth 0: the target is the province itself; its ids for meta are that one id.
    floor: async (db) => (await db.query({ name: 'hand-grouped', text: handGrouped, values: [42, INDICATORS + 1, 1000] })).rows.length,
  },
]

/**
 * The data both read benches read (bench/reads.ts, bench/scale-out.ts): country 1 → provinces 2..101 →
 * districts 102..10,000; 5 campaigns, 20 indicators, 1,000,000 computed values and 240,000 dated ones.
 * A pure function of the ids. The location tree is left to `cache_meta`.
 */
export async function seedReads(db: pg.Client) {
  await db.query(`insert into campaign_type (id, name) values (1, 'NID')`)
  await db.query(`insert into location_type (id, name, admin_level) values (1, 'Country', 0), (2, 'Province', 1), (3, 'District', 2)`)
  await db.query(`insert into location (id, name, location_code, location_type_id, parent_location_id)
    select g, 'L' || g, 'G' || g, case when g = 1 then 1 when g <= 101 then 2 else 3 end,
           case when g = 1 then null when g <= 101 then 1 else 2 + (g % 100) end
    from generate_series(1, ${LOCATIONS}) g order by g`)
  await db.query(`insert into campaign (id, name, campaign_type_id, start_date, end_date)
    select g, 'C' || g, 1, date '2016-01-01' + 30 * g, date '2016-01-05' + 30 * g from generate_series(1, ${CAMPAIGNS}) g`)
  await db.query(`insert into indicator (id, name, short_name, data_format, resource_name)
    select g, 'I' || g, 'i' || g, 'int', 'campaign' from generate_series(1, ${INDICATORS}) g
    union all select ${INDICATORS + 1}, 'Cases', 'cases', 'date_int', 'date'`)
  for (const table of ['campaign_type', 'location_type', 'location', 'campaign', 'indicator']) {
    await db.query(`select setval(pg_get_serial_sequence('${table}', 'id'), (select max(id) from ${table}))`)
  }
  await db.query(`insert into datapoint_with_computed (indicator_id, location_id, campaign_id, value)
    select i, l, c, (l * 31 + i * 17 + c * 7) % 1000
    from generate_series(1, ${CAMPAIGNS}) c, generate_series(1, ${INDICATORS}) i, generate_series(1, ${LOCATIONS}) l`)
  const { rows } = await db.query(`insert into source_submission (document_id, instance_guid, row_number, submission_json, process_status)
    select id, 'bench', 0, '{}', 'PROCESSED' from source_doc where guid = 'data-entry' returning id`)
  await db.query(
    `insert into datapoint (indicator_id, location_id, data_date, value, source_submission_id, unique_index, precedence_at)
    select ${INDICATORS + 1}, l, d::date, (l + extract(month from d)::int) % 5, $1, l || '_${INDICATORS + 1}_' || d::date, now()
    from generate_series(1, ${LOCATIONS}) l, generate_series(date '2014-01-01', date '2015-12-01', interval '1 month') d`,
    [rows[0].id],
  )
  await db.query('vacuum analyze')
}

/**
 * Seeds the bench:reads data into the scratch database at `url`, then has the server on `port`
 * (started on that database, the admin's key in `auth`) build its location tree (`cache_meta`);
 * logs how long it took.
 */
export async function seedReadsThroughServer(url: string, port: number, auth: Record<string, string>) {
  const seeder = new pg.Client({ connectionString: url })
  await seeder.connect()
  const started = Date.now()
  try {
    await seedReads(seeder)
    const tree = await fetch(`http://127.0.0.1:${port}/api/v1/cache_meta/`, { headers: auth })
    if (tree.status !== 200) throw new Error(`cache_meta: ${tree.status}`)
    await seeder.query('vacuum analyze location_tree')
  } finally {
    await seeder.end()
  }
  console.log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}
