// upload_template: the columns and rows of a file that, filled in and uploaded as it is, has nothing
// to map (lib/ingest/template.ts). A GET that may write, as transform_upload does: an object without a
// code a file can carry gets its own name mapped to it first.
import { defineResource } from '../lib/api/resource.js'
import { Param } from '../lib/api/query.js'
import { notFound, validationError } from '../lib/core/errors.js'
import { assertLocationPermitted } from '../lib/datapoints/location-selection.js'
import { uploadTemplate } from '../lib/ingest/template.js'

const PARAMS = {
  file_type: Param.string('campaign (the default) or date'),
  location_id: Param.integer('the rows: the lowest locations under this one (default: your part of the tree, or all of it)'),
  campaign_id: Param.integer('campaign files: the campaign of every row (default: the latest)'),
  data_date: Param.date('date files: the day of every row (default: today)'),
}

export default defineResource({
  name: 'upload_template',
  kind: 'non_model',
  description:
    'The header and rows of an upload file with nothing to map: each indicator of the file type (calculated ones left out, listed in `calculated`) under a code mapped to it, one row per lowest location you may upload for.',
  params: PARAMS,
  result_fields: {
    file_type: 'string',
    location_id: 'integer',
    campaign: 'json',
    data_date: 'string',
    header: 'json',
    indicators: 'json',
    rows: 'json',
    calculated: 'json',
    without_code: 'json',
  },
  result_schemas: {
    location_id: {
      type: 'integer',
      nullable: true,
      description: 'the location whose lowest locations are the rows (null: your part of the tree, or all of it)',
    },
    data_date: { type: 'string', nullable: true, description: 'date files: the day of every row (null for campaign files)' },
  },
  action: async (ctx) => {
    const { params } = ctx
    const fileType = params.file_type ?? 'campaign'
    if (fileType !== 'campaign' && fileType !== 'date') throw validationError('file_type', 'must be one of campaign, date')
    if (params.location_id !== undefined) {
      await assertLocationPermitted(ctx, params.location_id)
      const location = await ctx.db.selectFrom('location').select('id').where('id', '=', params.location_id).executeTakeFirst()
      if (!location) throw notFound('location', String(params.location_id))
    }
    const dataDate = params.data_date ?? new Date().toISOString().slice(0, 10)
    const asked = { fileType, root: params.location_id ?? null, campaignId: params.campaign_id, dataDate } as const
    return [await uploadTemplate(ctx.db, ctx.user, asked)]
  },
})
