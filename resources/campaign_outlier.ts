// Outliers among a campaign's entered and uploaded values (lib/engine/outliers.ts): far from the same
// location's history of the indicator (a z-score over its last values before the campaign), or outside its
// min–max range. A user with a location responsibility sees only what lies in their subtree.
import { sql } from 'kysely'
import { defineResource, type Context } from '../lib/api/resource.js'
import { Param } from '../lib/api/query.js'
import { validationError } from '../lib/core/errors.js'
import { permittedLocations } from '../lib/engine/access.js'
import { findOutliers } from '../lib/engine/outliers.js'

/** The history a z-score or a generated range is measured over (shared with min_max_generate). */
export const HISTORY_PARAM = {
  history: Param.integer(
    'how many of the location’s last values of the indicator before this campaign make a value’s history (default: OUTLIER_HISTORY_CAMPAIGNS, 6)',
  ),
}

const params = {
  campaign_id: Param.integer('the campaign whose values are judged', { required: true }),
  location_id: Param.integer('the values of that location and its descendants (default: every location you may see)'),
  z: Param.number('how many standard deviations from its history makes a value an outlier (default: OUTLIER_Z_SCORE, 3)'),
  ...HISTORY_PARAM,
}

/** The raw values within `location_id`'s subtree (else all), within the requester's own. */
export function valuesWithin(ctx: Context<{ location_id?: number }>) {
  const { location_id } = ctx.params
  const within = location_id === undefined ? sql`true` : sql`d.location_id in (select location_id from location_tree where parent_location_id = ${location_id})`
  return ctx.user.restricted ? sql<boolean>`${within} and d.location_id in ${permittedLocations(ctx.user)}` : sql<boolean>`${within}`
}

/** The history's length asked for, else the setting's: at least two campaigns, to have a spread. */
export function historyOf(ctx: Context<typeof HISTORY_PARAM>): number {
  const history = ctx.params.history ?? ctx.config.OUTLIER_HISTORY_CAMPAIGNS
  if (history < 2 || history > 100) throw validationError('history', 'must be from 2 to 100 values')
  return history
}

const place = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } }, required: ['id', 'name'] }
const nullableNumber = { type: 'number', nullable: true }

export default defineResource({
  name: 'campaign_outlier',
  kind: 'non_model',
  reads_only: true,
  description:
    "A campaign's entered and uploaded counts and percents that are far from the same location's history (z-score) or outside its min–max range, the farthest first.",
  params,
  result_fields: {
    method: 'string',
    datapoint_id: 'integer',
    location: 'json',
    indicator: 'json',
    campaign: 'json',
    value: 'float',
    z: 'float',
    mean: 'float',
    sd: 'float',
    history_values: 'integer',
    range: 'json',
  },
  result_schemas: {
    method: { type: 'string', enum: ['z_score', 'min_max'], description: 'z_score: far from its history; min_max: outside its range' },
    datapoint_id: { type: 'integer', description: 'the raw value (datapoint) judged' },
    location: place,
    indicator: place,
    campaign: place,
    value: { type: 'number' },
    z: { ...nullableNumber, description: 'how many standard deviations from the mean of its history; null where that history never varied' },
    mean: { ...nullableNumber, description: 'the mean of its history' },
    sd: { ...nullableNumber, description: 'the standard deviation of its history' },
    history_values: { type: 'integer', description: 'how many values its history holds' },
    range: {
      type: 'object',
      nullable: true,
      description: 'min_max: the range it is outside (min_max_range)',
      properties: { mn_val: nullableNumber, mx_val: nullableNumber, generated: { type: 'boolean' } },
      required: ['mn_val', 'mx_val', 'generated'],
    },
  },
  action: async (ctx) => {
    const z = ctx.params.z ?? ctx.config.OUTLIER_Z_SCORE
    if (!(z > 0)) throw validationError('z', 'must be above 0')
    const history = historyOf(ctx)
    // Only the setting's history is summed up and kept: a `history` asked for is grouped afresh, so no
    // reader can fill the database with a summary per length.
    const kept = history === ctx.config.OUTLIER_HISTORY_CAMPAIGNS ? ctx.config.OUTLIER_SUMMARIES_KEPT : 0
    const outliers = await findOutliers(ctx.db, { campaignId: ctx.params.campaign_id, scope: valuesWithin(ctx), z, history, summariesKept: kept })
    return outliers as unknown as Array<Record<string, unknown>>
  },
})
