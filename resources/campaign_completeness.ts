// Reporting completeness (DHIS2's "reporting rate"): for a campaign, which of the locations that enter
// values (the leaves of the tree) have reported at least one value, counted per parent ("7 of 9
// districts of Eastvale"), with the ones still missing named. A user with a location responsibility
// sees only the parents and places within their subtree.
import { sql } from 'kysely'
import { defineResource, type Context } from '../lib/api/resource.js'
import { Param } from '../lib/api/query.js'
import { permittedLocations } from '../lib/engine/access.js'

const params = {
  campaign_id: Param.integer('the campaign whose reports are counted', { required: true }),
  location_id: Param.integer('the places within that location (default: every location you may see)'),
}

const place = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } }, required: ['id', 'name'] }

/** Which leaves are counted: in `location_id`'s subtree (else all), both they and their parent within the requester's own. */
function counted(ctx: Context<typeof params>) {
  const { location_id } = ctx.params
  const within = location_id === undefined ? sql`true` : sql`l.id in (select location_id from location_tree where parent_location_id = ${location_id})`
  return ctx.user.restricted ? sql`${within} and l.id in ${permittedLocations(ctx.user)} and l.parent_location_id in ${permittedLocations(ctx.user)}` : within
}

export default defineResource({
  name: 'campaign_completeness',
  kind: 'non_model',
  reads_only: true,
  description: "How many of the places that enter values (the tree's leaves) have reported for a campaign, per parent, and which have not.",
  params,
  result_fields: { location: 'json', expected: 'integer', reported: 'integer', rate: 'float', missing: 'json' },
  result_schemas: {
    location: { ...place, description: 'the parent whose places are counted' },
    expected: { type: 'integer', description: 'its places that enter values' },
    reported: { type: 'integer', description: 'those with at least one value of the campaign' },
    rate: { type: 'number', description: 'reported ÷ expected, from 0 to 1' },
    missing: { type: 'array', items: place, description: 'the places that have not reported, by name' },
  },
  action: async (ctx) => {
    const { rows } = await sql<Record<string, unknown>>`
      with leaves as (
        select l.id, l.name, l.parent_location_id from location l
        where l.parent_location_id is not null and not exists (select 1 from location c where c.parent_location_id = l.id) and ${counted(ctx)}
      ), reported as (
        select distinct location_id from datapoint where campaign_id = ${ctx.params.campaign_id} and value is not null
      )
      select json_build_object('id', p.id, 'name', p.name) as location, count(*)::int as expected, count(r.location_id)::int as reported,
        count(r.location_id)::float8 / count(*) as rate,
        coalesce(json_agg(json_build_object('id', l.id, 'name', l.name) order by l.name) filter (where r.location_id is null), '[]') as missing
      from leaves l join location p on p.id = l.parent_location_id left join reported r on r.location_id = l.id
      group by p.id, p.name order by p.name, p.id`.execute(ctx.db)
    return rows
  },
})
