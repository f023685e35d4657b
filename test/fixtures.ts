// Fixture setups of acceptance.md §0 (H-META …) on the invented country of fixtures/country.ts,
// inserted directly through the data layer with their explicit ids, then sequences reset and the
// location tree and indicator caches rebuilt (as cache_meta).
import { sql, type Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import { rebuildTree } from '../lib/data/location-tree.js'
import { refreshBoundJson, refreshTagJson } from '../lib/data/caches.js'
import { resetSequence } from './helper.js'
import { CAMPAIGNS, COUNTRY, INDICATORS, MAPPED_CODES, PROVINCES } from './fixtures/country.js'

export async function afterDirectInserts(db: Kysely<DB>, tables: string[]) {
  for (const table of tables) await resetSequence(db, table)
  await rebuildTree(db)
  await refreshTagJson(db)
  await refreshBoundJson(db)
}

/** H-META: Lorvania 12907 and its 12 provinces, 8 campaigns, 4 indicators, tag 1 `Polio`. */
export async function hMeta(db: Kysely<DB>) {
  await db
    .insertInto('campaign_type')
    .values({ id: 1, name: 'NID' } as never)
    .execute()
  await db
    .insertInto('location_type')
    .values([
      { id: 1, name: 'country', admin_level: 0 },
      { id: 2, name: 'province', admin_level: 1 },
    ] as never)
    .execute()
  // The country first, so the provinces' foreign key holds row by row.
  await db
    .insertInto('location')
    .values([
      { ...COUNTRY, location_type_id: 1, parent_location_id: null },
      ...PROVINCES.map((p) => ({ ...p, location_type_id: 2, parent_location_id: COUNTRY.id })),
    ] as never)
    .execute()
  await db
    .insertInto('campaign')
    .values(CAMPAIGNS.map(({ id, name, date }) => ({ id, name, campaign_type_id: 1, start_date: date, end_date: date })) as never)
    .execute()
  await db
    .insertInto('indicator')
    .values(INDICATORS as never)
    .execute()
  await db
    .insertInto('indicator_tag')
    .values({ id: 1, tag_name: 'Polio' } as never)
    .execute()
  await afterDirectInserts(db, ['campaign_type', 'location_type', 'location', 'campaign', 'indicator', 'indicator_tag'])
}

/** H-MAP: H-META plus four mappings created through the API (acceptance.md §0). */
export async function hMap(db: Kysely<DB>, post: (path: string, body: unknown) => Promise<{ status: number }>) {
  await hMeta(db)
  for (const [content_type, source_object_code, master_object_id] of [
    ['location', MAPPED_CODES.location, COUNTRY.id],
    ['campaign', MAPPED_CODES.campaign, 99],
    ['indicator', MAPPED_CODES.otherReasons, 164],
    ['indicator', MAPPED_CODES.survey, 12911],
  ] as const) {
    const res = await post('/source_object_map/', { content_type, source_object_code, master_object_id })
    if (res.status !== 201) throw new Error(`mapping ${source_object_code} failed: ${res.status}`)
  }
}

type Post = (path: string, body: unknown) => Promise<{ body: { id: number } }>

/** One country L, one campaign C and one int indicator n, created through the API. */
export async function smallWorld(post: Post) {
  const type = (await post('/location_type/', { name: 'Country', admin_level: 0 })).body.id
  const location = (await post('/location/', { name: 'L', location_code: 'L', location_type_id: type })).body.id
  const campaignType = (await post('/campaign_type/', { name: 'NID' })).body.id
  const campaign = (await post('/campaign/', { name: 'C', campaign_type_id: campaignType, start_date: '2016-01-01', end_date: '2016-01-02' })).body.id
  const indicator = (await post('/indicator/', { name: 'n', short_name: 'n', data_format: 'int' })).body.id
  return { location, campaign, indicator }
}

/**
 * A mapped small world and an uploaded, untransformed 3,000-row campaign file (one mapped row): the
 * submissions are written in three batches, so a fault at row 1,500 strikes half-way through.
 */
export async function halfWayUpload(post: Post): Promise<number> {
  const { location, campaign, indicator } = await smallWorld(post)
  for (const [content_type, code, id] of [
    ['location', 'G0', location],
    ['campaign', 'C', campaign],
    ['indicator', 'n', indicator],
  ] as const) {
    await post('/source_object_map/', { content_type, source_object_code: code, master_object_id: id })
  }
  const rows = Array.from({ length: 3000 }, (_, i) => `C,G${i},${i}`)
  const csv = Buffer.from(['campaign,geocode,n', ...rows].join('\n'))
  return (await post('/document/', { docfile: csv.toString('base64'), doc_title: 'big.csv', file_type: 'campaign' })).body.id
}

/**
 * Runs `action` (PL/pgSQL) when the halfWayUpload's row 1,500 is inserted into source_submission: a
 * fault half-way through a transform. Removed when `t` ends.
 */
export async function atHalfWay(t: { teardown(fn: () => unknown): void }, db: Kysely<DB>, name: string, action: string) {
  await sql
    .raw(`create function ${name}() returns trigger language plpgsql as $$
    begin if new.row_number = 1500 then ${action}; end if; return new; end $$`)
    .execute(db)
  await sql.raw(`create trigger ${name} before insert on source_submission for each row execute function ${name}()`).execute(db)
  t.teardown(async () => {
    await sql.raw(`drop trigger if exists ${name} on source_submission`).execute(db)
    await sql.raw(`drop function if exists ${name}()`).execute(db)
  })
}
