import { col, table } from './columns.js'

/** Campaigns whose derived values wait for a full recompute under the current rules (sql/023). */
export const CampaignRecomputePending = table('campaign_recompute_pending', {
  campaign_id: col.fk('campaign', { onDelete: 'cascade', primaryKey: true, unique: true }),
})
