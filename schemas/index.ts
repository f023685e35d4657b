// The registry of every table schema, and the Kysely database type derived from them.
import type { Static, TObject } from 'typebox'
import { AggDatapoint } from './agg_datapoint.js'
import { ApiKey } from './api_key.js'
import { AuthGroup } from './auth_group.js'
import { AuthUser } from './auth_user.js'
import { AuthUserGroups } from './auth_user_groups.js'
import { CalculatedIndicatorComponent } from './calculated_indicator_component.js'
import { Campaign } from './campaign.js'
import { CampaignRecomputePending } from './campaign_recompute_pending.js'
import { CampaignType } from './campaign_type.js'
import { CustomChart } from './custom_chart.js'
import { CustomDashboard } from './custom_dashboard.js'
import { Datapoint } from './datapoint.js'
import { DatapointFollowup } from './datapoint_followup.js'
import { DatapointHistory } from './datapoint_history.js'
import { DatapointWithComputed } from './datapoint_with_computed.js'
import { DocDatapoint } from './doc_datapoint.js'
import { DocumentTakeover } from './document_takeover.js'
import { DocDetail } from './doc_detail.js'
import { DocDetailType } from './doc_detail_type.js'
import { DocObjectMap } from './doc_object_map.js'
import { Indicator } from './indicator.js'
import { IndicatorBound } from './indicator_bound.js'
import { IdempotencyKey } from './idempotency_key.js'
import { IndicatorClassMap } from './indicator_class_map.js'
import { IndicatorTag } from './indicator_tag.js'
import { IndicatorToTag } from './indicator_to_tag.js'
import { Job } from './job.js'
import { JobKind } from './job_kind.js'
import { JobState } from './job_state.js'
import { Location } from './location.js'
import { LocationPermission } from './location_permission.js'
import { LocationPolygon } from './location_polygon.js'
import { LocationTree } from './location_tree.js'
import { LocationType } from './location_type.js'
import { MinMaxRange } from './min_max_range.js'
import { OutlierHistory, OutlierHistoryRun } from './outlier_history.js'
import { PasswordReset } from './password_reset.js'
import { DashboardShare } from './dashboard_share.js'
import { SourceDoc } from './source_doc.js'
import { SourceObjectMap } from './source_object_map.js'
import { SourceSubmission } from './source_submission.js'
import { UserSession } from './user_session.js'
import { ValidationRule } from './validation_rule.js'

export const tables = {
  agg_datapoint: AggDatapoint,
  api_key: ApiKey,
  auth_group: AuthGroup,
  auth_user: AuthUser,
  auth_user_groups: AuthUserGroups,
  calculated_indicator_component: CalculatedIndicatorComponent,
  campaign: Campaign,
  campaign_recompute_pending: CampaignRecomputePending,
  campaign_type: CampaignType,
  custom_chart: CustomChart,
  custom_dashboard: CustomDashboard,
  datapoint: Datapoint,
  datapoint_followup: DatapointFollowup,
  datapoint_history: DatapointHistory,
  datapoint_with_computed: DatapointWithComputed,
  doc_datapoint: DocDatapoint,
  document_takeover: DocumentTakeover,
  doc_detail: DocDetail,
  doc_detail_type: DocDetailType,
  doc_object_map: DocObjectMap,
  idempotency_key: IdempotencyKey,
  indicator: Indicator,
  indicator_bound: IndicatorBound,
  indicator_class_map: IndicatorClassMap,
  indicator_tag: IndicatorTag,
  indicator_to_tag: IndicatorToTag,
  job: Job,
  job_kind: JobKind,
  job_state: JobState,
  location: Location,
  location_permission: LocationPermission,
  location_polygon: LocationPolygon,
  location_tree: LocationTree,
  location_type: LocationType,
  min_max_range: MinMaxRange,
  outlier_history: OutlierHistory,
  outlier_history_run: OutlierHistoryRun,
  password_reset: PasswordReset,
  dashboard_share: DashboardShare,
  source_doc: SourceDoc,
  source_object_map: SourceObjectMap,
  source_submission: SourceSubmission,
  user_session: UserSession,
  validation_rule: ValidationRule,
} satisfies Record<string, TObject>

export type TableName = keyof typeof tables

/** The Kysely database interface: one row type per table, straight from the TypeBox schemas. */
export type DB = { [K in TableName]: Static<(typeof tables)[K]> }

export function tableSchema(name: string): TObject {
  const schema = (tables as Record<string, TObject>)[name]
  if (!schema) throw new Error(`no schema for table ${name}`)
  return schema
}
