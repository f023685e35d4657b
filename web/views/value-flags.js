// Flags where people read numbers: the values of the campaigns shown that break a validation rule or
// their bounds (validation_result) or wait for a follow-up (datapoint_followup), each said in words
// with its numbers, by location, campaign and indicator. Read for a selection of campaigns in a
// location's subtree; the API keeps a restricted reader to her part.
import { list, query } from '../api.js'
import { formatValue } from '../format.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { useRead } from './use-read.js'

/** A rule's operator as a sign people read. */
export const OPERATOR_WORDS = { '<=': '≤', '<': '<', '=': '=', '>=': '≥', '>': '>', '!=': '≠' }

/** A cell's key in the flags. */
export const flagKey = (locationId, campaignId, indicatorId) => `${locationId}/${campaignId}/${indicatorId}`

/** A broken rule or bound in words, with both numbers: "Flagged by missed at most vaccinated: 5,000 ≤ 900". */
export function violationWords(v, catalog) {
  const left = formatValue(v.left.value, catalog.indicatorFormat.get(v.left.indicator_id))
  const right =
    v.right.indicator_id == null
      ? formatValue(v.right.value, catalog.indicatorFormat.get(v.left.indicator_id))
      : `${catalog.indicatorName.get(v.right.indicator_id) ?? v.right.indicator_id} ${formatValue(v.right.value, catalog.indicatorFormat.get(v.right.indicator_id))}`
  return t('Flagged by “{rule}”: {left} should be {operator} {right}', {
    rule: v.rule.name,
    left,
    operator: OPERATOR_WORDS[v.rule.operator] ?? v.rule.operator,
    right,
  })
}

/** The words of every flagged or followed-up value of `campaignIds` under `locationId`, by flagKey. */
async function readFlags(campaignIds, locationId, catalog) {
  const flags = new Map()
  const add = (key, words) => flags.set(key, [...(flags.get(key) ?? []), words])
  const [violations, followups] = await Promise.all([
    Promise.all(campaignIds.map((campaign_id) => list(`/validation_result/${query({ campaign_id, location_id: locationId ?? undefined, limit: 0 })}`))),
    list(`/datapoint_followup/${query({ campaign_id__in: campaignIds, resolved_at__isnull: 'true', limit: 0 })}`),
  ])
  for (const v of violations.flat()) add(flagKey(v.location.id, v.campaign.id, v.left.indicator_id), violationWords(v, catalog))
  for (const f of followups) add(flagKey(f.location_id, f.campaign_id, f.indicator_id), t('To follow up: {comment}', { comment: f.comment }))
  return flags
}

/** The flags of a selection over campaigns (none over dates: rules and follow-ups are campaigns'). */
export function useValueFlags(campaignIds, locationId, catalog) {
  const asked = campaignIds?.length ? campaignIds : null
  return useRead(() => (asked ? readFlags(asked, locationId, catalog) : Promise.resolve(new Map())), [JSON.stringify(asked), locationId], new Map()).value
}

/** A flagged cell's mark: a sign, and its words for every reader (a tooltip, and text for a screen reader). */
export function FlagMark({ words }) {
  if (!words?.length) return null
  const text = words.join(' · ')
  return html` <span class="value-flag" title=${text} aria-hidden="true">⚑</span><span class="visually-hidden">${text}</span>`
}
