import { col, table } from './columns.js'

export const CampaignType = table('campaign_type', {
  id: col.id(),
  name: col.string({ maxLength: 55 }),
})
