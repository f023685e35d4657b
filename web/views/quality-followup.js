// Follow-up of values (the API's datapoint_followup): a value doubted on the Data quality page is
// marked with a comment (FollowUpButton), listed with the campaign's open follow-ups, and resolved
// with a comment (OpenFollowups); a dashboard says how many its campaign has (FollowupCount).
import { useState } from 'preact/hooks'
import { api, change, list, query } from '../api.js'
import { formatTime, formatValue } from '../format.js'
import { html } from '../html.js'
import { t, tn } from '../i18n.js'
import { useRead } from './use-read.js'

/** A comment asked in the page, then `send(comment)`; its failure said beside it. */
function CommentForm({ label, action, send, onDone }) {
  const [open, setOpen] = useState(false)
  const [comment, setComment] = useState('')
  const [error, setError] = useState('')
  if (!open) return html`<button type="button" class="secondary" onClick=${() => setOpen(true)}>${action}</button>`
  const submit = async (event) => {
    event.preventDefault()
    try {
      await send(comment)
      setOpen(false)
      setComment('')
      onDone()
    } catch (failure) {
      setError(failure.message)
    }
  }
  return html`<form class="comment-form" onSubmit=${submit}>
    <label>${label} <input value=${comment} required onInput=${(e) => setComment(e.target.value)} /></label>
    <button type="submit">${action}</button>
    <button type="button" class="link" onClick=${() => setOpen(false)}>${t('Cancel')}</button>
    ${error && html`<span class="error" role="alert">${error}</span>`}
  </form>`
}

/** Marks the value `datapointId` for follow-up with a comment. */
export function FollowUpButton({ datapointId, onDone }) {
  return html`<${CommentForm}
    label=${t('What to check')}
    action=${t('Follow up')}
    send=${(comment) => change('POST', '/datapoint_followup/', { datapoint_id: datapointId, comment })}
    onDone=${onDone}
  />`
}

/** The campaign's open follow-ups (within the reader's part), each resolved here with a comment. */
export function OpenFollowups({ campaignId, catalog, changed, onChange }) {
  const path = `/datapoint_followup/${query({ campaign_id: campaignId, resolved_at__isnull: 'true', order_by: 'created_at', limit: 0 })}`
  const { value: found, error } = useRead(() => list(path), [path, changed], null)
  if (error) return html`<p class="error" role="alert">${error.message}</p>`
  if (!found) return html`<p>${t('Loading…')}</p>`
  if (!found.length) return html`<p>${t('No value waits for a follow-up.')}</p>`
  return html`<div class="table-scroll"><table class="quality stacked followups">
    <thead><tr><th scope="col">${t('Location')}</th><th scope="col">${t('Indicator')}</th><th scope="col">${t('Value')}</th><th scope="col">${t('What to check')}</th><th scope="col">${t('Marked')}</th><th scope="col">${t('Resolve')}</th></tr></thead>
    <tbody>${found.map(
      (f) => html`<tr key=${f.id}>
        <td data-label=${t('Location')}>${catalog.locationName.get(f.location_id) ?? f.location_id}</td>
        <td data-label=${t('Indicator')}>${catalog.indicatorName.get(f.indicator_id) ?? f.indicator_id}</td>
        <td data-label=${t('Value')}>${formatValue(f.value, catalog.indicatorFormat.get(f.indicator_id))}</td>
        <td data-label=${t('What to check')}>${f.comment}</td>
        <td data-label=${t('Marked')}>${formatTime(f.created_at)}</td>
        <td><${CommentForm}
          label=${t('How it was resolved')}
          action=${t('Resolve')}
          send=${(resolution_comment) => change('PATCH', `/datapoint_followup/${f.id}/`, { resolution_comment })}
          onDone=${onChange}
        /></td>
      </tr>`,
    )}</tbody>
  </table></div>`
}

/** How many values of the campaign wait for a follow-up, as a link to them; nothing when none do. */
export function FollowupCount({ campaignId, locationId }) {
  const path = `/datapoint_followup/${query({ campaign_id: campaignId, resolved_at__isnull: 'true', limit: 1 })}`
  const count = useRead(() => (campaignId == null ? undefined : api('GET', path).then((r) => r.body?.meta?.total_count ?? 0)), [path], 0).value
  if (!count) return null
  return html`<p class="followup-count"><a href=${`#/quality${query({ campaign: campaignId, location: locationId ?? undefined })}`}>${tn(
    count,
    '{n} value of this campaign waits for a follow-up',
    '{n} values of this campaign wait for a follow-up',
  )}</a></p>`
}

/** A value's follow-ups in its history panel, newest first: each mark and its resolution, with who and when. */
export function ValueFollowups({ cell, users }) {
  const keyField = cell.campaign_id != null ? { campaign_id: cell.campaign_id } : { data_date: cell.data_date }
  const path = `/datapoint_followup/${query({ location_id: cell.location_id, indicator_id: cell.indicator_id, ...keyField, order_by: '-id', limit: 0 })}`
  const { value: found } = useRead(() => list(path), [path], null)
  if (!found?.length) return null
  const who = (id) => (id == null ? '–' : (users.get(id) ?? t('user {id}', { id })))
  return html`<h3>${t('Follow-up')}</h3>
    <ul class="followup-history">${found.map(
      (f) => html`<li key=${f.id}>
        ${t('Marked {when} by {who}: {comment}', { when: formatTime(f.created_at), who: who(f.created_by_id), comment: f.comment })}
        ${
          f.resolved_at
            ? html`<br />${t('Resolved {when} by {who}: {comment}', { when: formatTime(f.resolved_at), who: who(f.resolved_by_id), comment: f.resolution_comment })}`
            : html` <strong>${t('Open')}</strong>`
        }
      </li>`,
    )}</ul>`
}
