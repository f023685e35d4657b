// Outliers, as DHIS2's Data Quality app finds them, among the values entered or uploaded for a campaign
// (the raw values: what a person typed or a file held), each against its own location and indicator:
// - z-score: far from the location's last values before it (|value − mean| ≥ z × standard deviation),
//   or, where that history never varied, different from it;
// - min–max: outside the location's range of the indicator (min_max_range), set by hand or generated
//   from the same history (`generateRanges`).
// Counts and percents only: a yes/no or a class has no distance to measure.
// Each value's history is summed up once per campaign (count, mean and deviation per location and
// indicator: outlier_history, sql/036), kept until a value of an earlier campaign changes, and read as
// one row per value; grouping every value of the campaigns before, at every read, took 1.3–2.3 s for a
// country (bench/README.md, "Data quality").
import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { DB } from '../../schemas/index.js'

/** The formats whose values are measured. */
const MEASURED_FORMATS = ['int', 'pct']
/** Values of the history a z-score needs: two for a spread; three before a history that never varied counts as one. */
const MIN_HISTORY = 2
const MIN_CONSTANT_HISTORY = 3

export interface OutlierSearch {
  campaignId: number
  /** Which raw values (`d.location_id`, `d.indicator_id`) are judged: a location's subtree, a user's. */
  scope: RawBuilder<boolean>
  /** How many standard deviations from the mean makes an outlier. */
  z: number
  /** How many of the location's last values before this campaign make a value's history. */
  history: number
  /** How many campaigns' history summaries are kept, the latest made first (0: none, grouped afresh). */
  summariesKept?: number
}

export interface Outlier {
  method: 'z_score' | 'min_max'
  /** The raw value's row (to mark it for follow-up). */
  datapoint_id: number
  location: { id: number; name: string }
  indicator: { id: number; name: string }
  campaign: { id: number; name: string }
  value: number
  /** z-score: how many standard deviations from the mean; null where the history never varied. */
  z: number | null
  mean: number | null
  sd: number | null
  /** How many values the history held. */
  history_values: number
  /** min–max: the range the value is outside. */
  range: { mn_val: number | null; mx_val: number | null; generated: boolean } | null
}

/** When `campaignId` started: its history is the values of the campaigns that started before. */
const startOf = (campaignId: number) => sql`(select start_date from campaign where id = ${campaignId})`

/**
 * Each judged value with its history's mean, standard deviation and count: the location's last values
 * of the indicator before the campaign (a campaign that did not reach it is not a gap in its history).
 * A value of one of the last `history` campaigns before this one is always in its history (at most
 * `history` − 1 campaigns came between), so one pass over those campaigns' values, grouped by location
 * and indicator, gives the history of every pair that holds `history` values there, or of all pairs
 * when no earlier campaign exists; only a pair with fewer, where earlier campaigns exist, looks further
 * back, row by row. A value found row by row for each of a country's 200,000 pairs took 4–5 s.
 */
function judged(search: OutlierSearch) {
  const C = search.campaignId
  const N = search.history
  return sql`prior as materialized (
      select id, row_number() over (order by start_date desc, id desc) as latest from campaign where start_date < ${startOf(C)}
    ), pairs as (
      select max(d.id) filter (where d.campaign_id = ${C}) as datapoint_id, d.location_id, d.indicator_id,
        max(d.value) filter (where d.campaign_id = ${C}) as value,
        avg(d.value) filter (where d.campaign_id <> ${C}) as mean, stddev_samp(d.value) filter (where d.campaign_id <> ${C}) as sd,
        count(d.value) filter (where d.campaign_id <> ${C})::int as n
      from datapoint d
      join indicator i on i.id = d.indicator_id and i.data_format in (${sql.join(MEASURED_FORMATS)})
      where d.campaign_id in (select id from prior where latest <= ${N} union all select ${C}) and d.value is not null and ${search.scope}
      group by d.location_id, d.indicator_id
      having count(*) filter (where d.campaign_id = ${C}) > 0
    ), judged as (
      select * from pairs where n >= ${N} or not exists (select 1 from prior where latest > ${N})
      union all
      select p.datapoint_id, p.location_id, p.indicator_id, p.value, avg(h.value), stddev_samp(h.value), count(h.value)::int
      from pairs p left join lateral (
        select x.value from datapoint x join prior pc on pc.id = x.campaign_id
        where x.location_id = p.location_id and x.indicator_id = p.indicator_id and x.value is not null
        order by pc.latest limit ${N}
      ) h on true
      where p.n < ${N} and exists (select 1 from prior where latest > ${N})
      group by p.datapoint_id, p.location_id, p.indicator_id, p.value
    )`
}

/**
 * Each judged value with its history read from the campaign's kept summary (`keepHistory`); a value
 * whose location and indicator have no value in the last `history` campaigns before it, where older
 * campaigns exist, looks further back row by row, as `judged` does.
 */
function judgedFromSummary(search: OutlierSearch) {
  const C = search.campaignId
  const N = search.history
  return sql`prior as materialized (
      select id, row_number() over (order by start_date desc, id desc) as latest from campaign where start_date < ${startOf(C)}
    ), summed as (
      select d.id as datapoint_id, d.location_id, d.indicator_id, d.value, h.mean, h.sd, h.n
      from datapoint d
      join indicator i on i.id = d.indicator_id and i.data_format in (${sql.join(MEASURED_FORMATS)})
      left join outlier_history h on h.campaign_id = ${C} and h.history = ${N} and h.location_id = d.location_id and h.indicator_id = d.indicator_id
      where d.campaign_id = ${C} and d.value is not null and ${search.scope}
    ), judged as (
      select datapoint_id, location_id, indicator_id, value, mean, sd, coalesce(n, 0) as n from summed
      where n is not null or not exists (select 1 from prior where latest > ${N})
      union all
      select s.datapoint_id, s.location_id, s.indicator_id, s.value, avg(h.value), stddev_samp(h.value), count(h.value)::int
      from summed s left join lateral (
        select x.value from datapoint x join prior pc on pc.id = x.campaign_id
        where x.location_id = s.location_id and x.indicator_id = s.indicator_id and x.value is not null
        order by pc.latest limit ${N}
      ) h on true
      where s.n is null and exists (select 1 from prior where latest > ${N})
      group by s.datapoint_id, s.location_id, s.indicator_id, s.value
    )`
}

/**
 * Makes the campaign's summary of its values' history over `history` values (outlier_history) unless
 * it is current, in the caller's transaction. False where it cannot be kept, and the read groups the
 * history itself: a read-only transaction (a standby's), or a write of an earlier campaign's values
 * under way (it holds the lock its triggers take, sql/036: a summary made now could miss it).
 */
async function keepHistory(db: Kysely<DB>, campaignId: number, history: number, kept: number): Promise<boolean> {
  const made = sql<{ made: boolean }>`select exists (select 1 from outlier_history_run where campaign_id = ${campaignId} and history = ${history}) as made`
  const [{ read_only }] = (await sql<{ read_only: boolean }>`select current_setting('transaction_read_only') = 'on' as read_only`.execute(db)).rows
  if ((await made.execute(db)).rows[0].made) return true
  if (read_only) return false
  const [{ locked }] = (await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(outlier_history_lock_key()) as locked`.execute(db)).rows
  if (!locked) return false
  // Another read may have made it while this one waited.
  if ((await made.execute(db)).rows[0].made) return true
  await sql`delete from outlier_history where campaign_id = ${campaignId} and history = ${history}`.execute(db)
  await sql`
    with prior as materialized (
      select id, row_number() over (order by start_date desc, id desc) as latest from campaign where start_date < ${startOf(campaignId)}
    ), window_pairs as (
      select d.location_id, d.indicator_id, avg(d.value) as mean, stddev_samp(d.value) as sd, count(d.value)::int as n
      from datapoint d join indicator i on i.id = d.indicator_id and i.data_format in (${sql.join(MEASURED_FORMATS)})
      where d.campaign_id in (select id from prior where latest <= ${history}) and d.value is not null
      group by d.location_id, d.indicator_id
    )
    insert into outlier_history (campaign_id, history, location_id, indicator_id, n, mean, sd)
    select ${campaignId}::int, ${history}::int, location_id, indicator_id, n, mean, sd from (
      select location_id, indicator_id, n, mean, sd from window_pairs
      where n >= ${history} or not exists (select 1 from prior where latest > ${history})
      union all
      select p.location_id, p.indicator_id, count(h.value)::int, avg(h.value), stddev_samp(h.value)
      from window_pairs p cross join lateral (
        select x.value from datapoint x join prior pc on pc.id = x.campaign_id
        where x.location_id = p.location_id and x.indicator_id = p.indicator_id and x.value is not null
        order by pc.latest limit ${history}
      ) h
      where p.n < ${history} and exists (select 1 from prior where latest > ${history})
      group by p.location_id, p.indicator_id
    ) summed
    -- In the key's order: inserted in a grouping's order, the key's index took 1.5 s more for a country.
    order by location_id, indicator_id`.execute(db)
  await sql`insert into outlier_history_run (campaign_id, history) values (${campaignId}, ${history})`.execute(db)
  // The summaries beyond the `kept` latest made go, their rows with them.
  await sql`
    with gone as (
      delete from outlier_history_run where (campaign_id, history) not in (
        select campaign_id, history from outlier_history_run order by made_at desc, campaign_id = ${campaignId} desc limit ${kept}
      ) returning campaign_id, history
    )
    delete from outlier_history h using gone where h.campaign_id = gone.campaign_id and h.history = gone.history`.execute(db)
  return true
}

/** The values of a campaign that are outliers: far from their history, the farthest first, then outside their range. */
export async function findOutliers(db: Kysely<DB>, search: OutlierSearch): Promise<Outlier[]> {
  // A country's pairs grouped at once (a summary made, or judged above) need ~50 MB: with the default
  // 4 MB the grouping spills to disk and took twice as long. Until the end of the caller's transaction.
  await sql`set local work_mem = '64MB'`.execute(db)
  const kept = (search.summariesKept ?? 0) > 0 && (await keepHistory(db, search.campaignId, search.history, search.summariesKept ?? 0))
  const { rows } = await sql<Outlier>`
    with ${kept ? judgedFromSummary(search) : judged(search)}, found as (
      select 'z_score' as method, j.datapoint_id, j.location_id, j.indicator_id, j.value,
        case when j.sd > 0 then abs(j.value - j.mean) / j.sd end as z, j.mean, j.sd, j.n, null::json as range
      from judged j
      where (j.n >= ${MIN_HISTORY} and j.sd > 0 and abs(j.value - j.mean) >= ${search.z} * j.sd)
        or (j.n >= ${MIN_CONSTANT_HISTORY} and j.sd = 0 and j.value <> j.mean)
      union all
      select 'min_max', j.datapoint_id, j.location_id, j.indicator_id, j.value, null, j.mean, j.sd, j.n,
        json_build_object('mn_val', r.mn_val, 'mx_val', r.mx_val, 'generated', r.generated)
      from judged j join min_max_range r on r.location_id = j.location_id and r.indicator_id = j.indicator_id
      where j.value < r.mn_val or j.value > r.mx_val
    )
    select f.method, f.datapoint_id, json_build_object('id', l.id, 'name', l.name) as location, json_build_object('id', i.id, 'name', i.name) as indicator,
      json_build_object('id', c.id, 'name', c.name) as campaign, f.value, f.z::float8 as z, f.mean::float8 as mean, f.sd::float8 as sd,
      f.n as history_values, f.range
    from found f join location l on l.id = f.location_id join indicator i on i.id = f.indicator_id join campaign c on c.id = ${search.campaignId}
    order by f.method = 'min_max', f.z desc nulls last, l.name, i.name`.execute(db)
  return rows.map((row) => ({ ...row, range: typeof row.range === 'string' ? JSON.parse(row.range) : row.range }))
}

export interface RangeGeneration {
  /** The campaign the ranges are for: generated from the campaigns before it. */
  campaignId: number
  /** Which locations and indicators get ranges (`d.location_id`, `d.indicator_id`). */
  scope: RawBuilder<boolean>
  /** The range is the mean ± this many standard deviations. */
  factor: number
  /** How many of each location's last values before the campaign make its history. */
  history: number
}

/**
 * Ranges generated from each location's history of each indicator (DHIS2's min–max generation): the
 * mean ± `factor` standard deviations, not below 0 where the history never was. Replaces generated
 * ranges; a range set by hand is kept. Returns how many were written.
 */
export async function generateRanges(db: Kysely<DB>, generation: RangeGeneration): Promise<number> {
  const { rows } = await sql<{ id: number }>`
    insert into min_max_range (location_id, indicator_id, mn_val, mx_val, generated)
    select d.location_id, d.indicator_id,
      greatest(avg(d.value) - ${generation.factor} * stddev_samp(d.value), least(0, min(d.value))), avg(d.value) + ${generation.factor} * stddev_samp(d.value), true
    from (
      select d.location_id, d.indicator_id, d.value,
        row_number() over (partition by d.location_id, d.indicator_id order by c.start_date desc, c.id desc) as latest
      from datapoint d join campaign c on c.id = d.campaign_id
      join indicator i on i.id = d.indicator_id and i.data_format in (${sql.join(MEASURED_FORMATS)})
      where d.value is not null and c.start_date < ${startOf(generation.campaignId)} and ${generation.scope}
    ) d
    where d.latest <= ${generation.history}
    group by d.location_id, d.indicator_id
    having count(d.value) >= ${MIN_HISTORY}
    on conflict (location_id, indicator_id) do update set mn_val = excluded.mn_val, mx_val = excluded.mx_val, created_at = now()
      where min_max_range.generated
    returning id`.execute(db)
  return rows.length
}
