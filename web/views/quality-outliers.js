// The outliers of a campaign on the Data quality page (the API's campaign_outlier): each value far
// from its place's last values of the indicator, or outside the place's range of it, said in words
// with the numbers that make it one. Editors generate the ranges from history here.
import { useState } from 'preact/hooks'
import { list, query } from '../api.js'
import { formatValue } from '../format.js'
import { html } from '../html.js'
import { t, tn } from '../i18n.js'
import { useRead } from './use-read.js'
import { FollowUpButton } from './quality-followup.js'

/** How far from its history's mean a usual value lies: within two standard deviations, "a usual value lies between … and …". */
const USUAL_SPREAD = 2

/** Why a value is an outlier, in words with its numbers; the statistics stay in the line's title. */
export function why(o, format) {
  const value = (number) => formatValue(number, format)
  if (o.method === 'min_max') {
    const { mn_val, mx_val, generated } = o.range
    const range =
      mn_val == null
        ? t('at most {max}', { max: value(mx_val) })
        : mx_val == null
          ? t('at least {min}', { min: value(mn_val) })
          : `${value(mn_val)} – ${value(mx_val)}`
    return generated ? t('outside its range {range} (from its history)', { range }) : t('outside its range {range} (set by hand)', { range })
  }
  if (o.z == null) return tn(o.history_values, 'its last value was always {mean}', 'its last {n} values were all {mean}', { mean: value(o.mean) })
  const spread = USUAL_SPREAD * o.sd
  // A count's usual range in whole numbers, as it is counted.
  const whole = format === 'int' ? Math.round : (n) => n
  const usual = { mean: value(o.mean), low: value(whole(Math.max(0, o.mean - spread))), high: value(whole(o.mean + spread)) }
  return o.value > o.mean
    ? tn(
        o.history_values,
        'much higher than its last value, {mean}',
        'much higher than usual: its last {n} values averaged {mean}; a usual value lies between {low} and {high}',
        usual,
      )
    : tn(
        o.history_values,
        'much lower than its last value, {mean}',
        'much lower than usual: its last {n} values averaged {mean}; a usual value lies between {low} and {high}',
        usual,
      )
}

/** The statistics behind a z-score line, for those who ask (the line's title). */
const statistics = (o) => (o.z == null ? undefined : t('{z} standard deviations from the mean', { z: formatValue(o.z) }))

/** The comments of the campaign's open follow-ups, by the value they mark (read again when `changed` moves). */
function useOpenFollowups(campaignId, changed) {
  const path = `/datapoint_followup/${query({ campaign_id: campaignId, resolved_at__isnull: 'true', limit: 0 })}`
  const { value } = useRead(() => list(path).then((rows) => new Map(rows.map((f) => [f.datapoint_id, f.comment]))), [path, changed], new Map())
  return value
}

export function Outliers({ campaignId, locationId, catalog, mayGenerate, onFollowUp, followupsChanged = 0 }) {
  const [generated, setGenerated] = useState({ count: null, error: '', times: 0 })
  const path = `/campaign_outlier/${query({ campaign_id: campaignId, location_id: locationId ?? undefined, limit: 0 })}`
  const { value: found, error } = useRead(() => list(path), [path, generated.times], null)
  // A value already marked says so, with what to check, instead of offering to mark it again.
  const open = useOpenFollowups(campaignId, followupsChanged)
  const generate = async () => {
    try {
      const [answer] = await list(`/min_max_generate/${query({ campaign_id: campaignId, location_id: locationId ?? undefined })}`)
      setGenerated((g) => ({ count: answer.ranges_written, error: '', times: g.times + 1 }))
    } catch (failure) {
      setGenerated((g) => ({ ...g, count: null, error: failure.message }))
    }
  }
  if (error) return html`<p class="error" role="alert">${error.message}</p>`
  if (!found) return html`<p>${t('Loading…')}</p>`
  return html`<p>${tn(found.length, '{n} value is far from what its place usually reports.', '{n} values are far from what their places usually report.')}</p>
    ${
      mayGenerate &&
      html`<p>
        <button type="button" class="secondary" onClick=${generate}>${t('Make ranges from history')}</button>
        ${generated.count != null && html` <span role="status">${tn(generated.count, '{n} range made or updated; ranges set by hand are kept.', '{n} ranges made or updated; ranges set by hand are kept.')}</span>`}
        ${generated.error && html` <span class="error" role="alert">${generated.error}</span>`}
      </p>`
    }
    ${
      found.length > 0 &&
      html`<div class="table-scroll"><table class="quality stacked outliers">
        <thead><tr><th scope="col">${t('Location')}</th><th scope="col">${t('Indicator')}</th><th scope="col" class="number">${t('Value')}</th><th scope="col">${t('Why')}</th><th scope="col">${t('Follow up')}</th></tr></thead>
        <tbody>${found.map((o, i) => {
          const format = catalog.indicatorFormat.get(o.indicator.id)
          return html`<tr key=${i}><td data-label=${t('Location')}>${o.location.name}</td><td data-label=${t('Indicator')}>${catalog.indicatorName.get(o.indicator.id) ?? o.indicator.name}</td><td data-label=${t('Value')} class="number">${formatValue(o.value, format)}</td><td data-label=${t('Why')} title=${statistics(o)}>${why(o, format)}</td><td>${
            open.has(o.datapoint_id)
              ? html`<span class="followed-up">${t('Followed up: {comment}', { comment: open.get(o.datapoint_id) })}</span>`
              : html`<${FollowUpButton} datapointId=${o.datapoint_id} onDone=${onFollowUp} />`
          }</td></tr>`
        })}</tbody>
      </table></div>`
    }`
}
