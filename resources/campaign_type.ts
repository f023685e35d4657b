import { CampaignType } from '../schemas/campaign_type.js'
import { defineResource } from '../lib/api/resource.js'

export default defineResource({
  name: 'campaign_type',
  schema: CampaignType,
  required_fields_for_post: ['name'],
})
