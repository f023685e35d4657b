import { col, table } from './columns.js'

/**
 * A campaign's summary of its values' history is made and current (sql/036): its rows in
 * outlier_history are complete. Deleted by any change that makes it stale.
 */
export const OutlierHistoryRun = table('outlier_history_run', {
  campaign_id: col.fk('campaign', { onDelete: 'cascade', primaryKey: true }),
  history: col.integer({ primaryKey: true }),
  made_at: col.createdAt(),
})

/**
 * The history of a campaign's values, summed up per location and indicator (sql/036): how many of the
 * location's last `history` values of the indicator before the campaign, their mean and standard
 * deviation. Read by the outliers (lib/engine/outliers.ts) only where its run exists.
 */
export const OutlierHistory = table('outlier_history', {
  campaign_id: col.integer({ primaryKey: true }),
  history: col.integer({ primaryKey: true }),
  location_id: col.integer({ primaryKey: true }),
  indicator_id: col.integer({ primaryKey: true }),
  n: col.integer(),
  mean: col.float({ nullable: true }),
  sd: col.float({ nullable: true }),
})
