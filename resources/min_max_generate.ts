// Generates min–max ranges (min_max_range) from each location's history of each count and percent:
// the mean ± MIN_MAX_FACTOR standard deviations of its values in the campaigns before `campaign_id`
// (lib/engine/outliers.ts). Ranges set by hand are kept. Within the requester's subtree.
import { defineResource } from '../lib/api/resource.js'
import { Param } from '../lib/api/query.js'
import { notFound, validationError } from '../lib/core/errors.js'
import { generateRanges } from '../lib/engine/outliers.js'
import { HISTORY_PARAM, historyOf, valuesWithin } from './campaign_outlier.js'

const params = {
  campaign_id: Param.integer('the campaign the ranges are for: made from the campaigns before it', { required: true }),
  location_id: Param.integer('that location and its descendants (default: every location you may change)'),
  factor: Param.number('the range is the mean ± this many standard deviations (default: MIN_MAX_FACTOR, 2)'),
  ...HISTORY_PARAM,
}

export default defineResource({
  name: 'min_max_generate',
  kind: 'non_model',
  // Ranges are metadata: who may set them by hand may generate them.
  writers: 'metadata_editors',
  description: 'Generate min–max ranges from history (the mean ± a factor of standard deviations), replacing generated ones and keeping those set by hand.',
  params,
  result_fields: { campaign_id: 'integer', ranges_written: 'integer' },
  action: async (ctx) => {
    const factor = ctx.params.factor ?? ctx.config.MIN_MAX_FACTOR
    if (!(factor > 0)) throw validationError('factor', 'must be above 0')
    const campaign = await ctx.db.selectFrom('campaign').select('id').where('id', '=', ctx.params.campaign_id).executeTakeFirst()
    if (!campaign) throw notFound('campaign', ctx.params.campaign_id)
    const written = await generateRanges(ctx.db, { campaignId: campaign.id, scope: valuesWithin(ctx), factor, history: historyOf(ctx) })
    return [{ campaign_id: campaign.id, ranges_written: written }]
  },
})
