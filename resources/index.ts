// Every resource the dispatcher serves. A resource is a schema in schemas/ plus one declaration here.
import type { Resource } from '../lib/api/resource.js'
import allMeta from './all_meta.js'
import cacheMeta from './cache_meta.js'
import calculatedIndicatorComponent from './calculated_indicator_component.js'
import campaign from './campaign.js'
import campaignType from './campaign_type.js'
import customChart from './custom_chart.js'
import dashboard from './dashboard.js'
import dashboardShare from './dashboard_share.js'
import docDetail from './doc_detail.js'
import docDetailType from './doc_detail_type.js'
import geo from './geo.js'
import group from './group.js'
import indicator from './indicator.js'
import indicatorBound from './indicator_bound.js'
import indicatorClassMap from './indicator_class_map.js'
import indicatorTag from './indicator_tag.js'
import indicatorToTag from './indicator_to_tag.js'
import location from './location.js'
import locationResponsibility from './location_responsibility.js'
import locationType from './location_type.js'
import user from './user.js'
import document from './document.js'
import sourceObjectMap from './source_object_map.js'
import sourceSubmission from './source_submission.js'
import docDatapoint from './doc_datapoint.js'
import campaignDatapoint from './campaign_datapoint.js'
import dateDatapoint from './date_datapoint.js'
import datapointHistory from './datapoint_history.js'
import datapointFollowup from './datapoint_followup.js'
import { campaignDocResult, dateDocResult } from './doc_results.js'
import { aggRefreshResource, queueProcessResource, refreshMaster, revertDocumentResource, transformUpload } from './pipeline.js'
import userGroup from './user_group.js'
import apiKey from './api_key.js'
import job from './job.js'
import uploadTemplate from './upload_template.js'
import validationRule from './validation_rule.js'
import validationResult from './validation_result.js'
import campaignCompleteness from './campaign_completeness.js'
import campaignOutlier from './campaign_outlier.js'
import minMaxRange from './min_max_range.js'
import minMaxGenerate from './min_max_generate.js'

export const resources: Resource[] = [
  campaignType,
  campaign,
  indicator,
  indicatorBound,
  indicatorClassMap,
  indicatorTag,
  indicatorToTag,
  calculatedIndicatorComponent,
  validationRule,
  minMaxRange,
  customChart,
  dashboard,
  dashboardShare,
  locationType,
  location,
  locationResponsibility,
  geo,
  docDetailType,
  docDetail,
  user,
  group,
  userGroup,
  apiKey,
  document,
  sourceObjectMap,
  sourceSubmission,
  docDatapoint,
  campaignDatapoint,
  dateDatapoint,
  datapointHistory,
  datapointFollowup,
  dateDocResult,
  campaignDocResult,
  transformUpload,
  refreshMaster,
  revertDocumentResource,
  uploadTemplate,
  job,
  aggRefreshResource,
  queueProcessResource,
  cacheMeta,
  allMeta,
  validationResult,
  campaignCompleteness,
  campaignOutlier,
  minMaxGenerate,
]
