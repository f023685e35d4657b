// Data quality, as a programme reviews a campaign before it publishes it: the values that break a
// validation rule or their indicator's bounds (both numbers and the rule, sortable, as a CSV), its
// outliers (web/views/quality-outliers.js), and the completeness of its reports (per parent, the places
// that have reported and the ones missing). All are the API's reads (validation_result,
// campaign_outlier, campaign_completeness): a restricted user sees her part.
import { useEffect, useMemo, useState } from 'preact/hooks'
import { list, query } from '../api.js'
import { formatValue } from '../format.js'
import { html } from '../html.js'
import { t, tn } from '../i18n.js'
import { LocationSearch } from './location-search.js'
import { Outliers } from './quality-outliers.js'
import { OpenFollowups } from './quality-followup.js'
import { useSortableColumns } from './sortable-columns.js'
import { useRead } from './use-read.js'

/** The operators in words, as a rule reads ("is at most"). */
const OPERATOR_WORDS = { '<=': '≤', '<': '<', '=': '=', '>=': '≥', '>': '>', '!=': '≠' }

/** A violation as the cells of its line: place, rule, value, operator, what it is compared with, what the rule does. */
function violationCells(v, catalog) {
  const format = catalog.indicatorFormat.get(v.left.indicator_id)
  const compared =
    v.right.indicator_id == null
      ? t('the limit {limit}', { limit: formatValue(v.right.value, format) })
      : `${catalog.indicatorName.get(v.right.indicator_id) ?? v.right.indicator_id} ${formatValue(v.right.value, catalog.indicatorFormat.get(v.right.indicator_id))}`
  return [
    v.location.name,
    v.rule.name,
    `${catalog.indicatorName.get(v.left.indicator_id) ?? v.left.indicator_id} ${formatValue(v.left.value, format)}`,
    OPERATOR_WORDS[v.rule.operator] ?? v.rule.operator,
    compared,
    v.rule.action === 'block' ? t('Refused') : t('Flagged'),
  ]
}

/** A CSV of `lines` (RFC 4180 quoting), as a download's address. */
function csvAddress(lines) {
  const cell = (text) => (/[",\n]/.test(text) ? `"${String(text).replaceAll('"', '""')}"` : String(text))
  return URL.createObjectURL(new Blob([lines.map((line) => line.map(cell).join(',')).join('\r\n')], { type: 'text/csv' }))
}

function Violations({ campaignId, locationId, catalog }) {
  const path = `/validation_result/${query({ campaign_id: campaignId, location_id: locationId ?? undefined, limit: 0 })}`
  const { value: found, error } = useRead(() => list(path), [path], null)
  const [sort, heading] = useSortableColumns(() => {}, { column: 0, descending: false })
  const header = [t('Location'), t('Rule'), t('Value'), t('Operator'), t('Compared with'), t('When broken')]
  const lines = useMemo(() => {
    const cells = (found ?? []).map((v) => violationCells(v, catalog))
    if (sort.column < 0) return cells
    const ordered = [...cells].sort((a, b) => a[sort.column].localeCompare(b[sort.column], undefined, { numeric: true }))
    return sort.descending ? ordered.reverse() : ordered
  }, [found, sort, catalog])
  const csv = useMemo(() => (found?.length ? csvAddress([header, ...lines]) : null), [lines])
  // A file's address holds its text until it is let go: the one of a former sort is.
  useEffect(() => () => csv && URL.revokeObjectURL(csv), [csv])
  if (error) return html`<p class="error" role="alert">${error.message}</p>`
  if (!found) return html`<p>${t('Loading…')}</p>`
  // None found says what a dashboard's red is, which a reader takes for a broken rule.
  const count = found.length
    ? tn(found.length, '{n} value breaks a rule or a limit of its indicator.', '{n} values break a rule or a limit of their indicator.')
    : t('No value breaks a rule or a limit of its indicator. A value a dashboard shows as bad has missed its target: that is not a mistake in the data.')
  return html`<p class="violation-count">${count}</p>
    ${csv && html`<p><a href=${csv} download=${t('rule violations.csv')}>${t('Download as CSV')}</a></p>`}
    ${
      found.length > 0 &&
      html`<div class="table-scroll"><table class="quality stacked violations">
        <thead><tr>${header.map((label, column) => heading(label, column))}</tr></thead>
        <tbody>${lines.map((cells, i) => html`<tr key=${i}>${cells.map((text, c) => html`<td key=${c} data-label=${header[c]}>${text}</td>`)}</tr>`)}</tbody>
      </table></div>`
    }`
}

function Completeness({ campaignId, locationId }) {
  const path = `/campaign_completeness/${query({ campaign_id: campaignId, location_id: locationId ?? undefined, limit: 0 })}`
  const { value: parents, error } = useRead(() => list(path), [path], null)
  if (error) return html`<p class="error" role="alert">${error.message}</p>`
  if (!parents) return html`<p>${t('Loading…')}</p>`
  if (!parents.length) return html`<p>${t('No places enter values here.')}</p>`
  return html`<div class="table-scroll"><table class="quality stacked completeness">
    <thead><tr><th scope="col">${t('Location')}</th><th scope="col">${t('Reported')}</th><th scope="col">${t('Not reported yet')}</th></tr></thead>
    <tbody>${parents.map(
      (p) => html`<tr key=${p.location.id} class=${p.reported < p.expected ? 'incomplete' : undefined}>
        <td data-label=${t('Location')}>${p.location.name}</td>
        <td data-label=${t('Reported')}>${t('{reported} of {expected} ({rate})', { reported: p.reported, expected: p.expected, rate: formatValue(p.rate, 'pct') })}</td>
        <td data-label=${t('Not reported yet')}>${p.missing.map((m) => m.name).join(', ') || '—'}</td>
      </tr>`,
    )}</tbody>
  </table></div>`
}

export function DataQuality({ catalog, params, navigate, mayEditRanges = false }) {
  const latest = catalog.campaigns.at(-1)?.id ?? null
  const campaignId = catalog.campaignName.has(Number(params.campaign)) ? Number(params.campaign) : latest
  const [locationId, setLocationId] = useState(catalog.locationName.has(Number(params.location)) ? Number(params.location) : (catalog.roots[0]?.id ?? null))
  // Follow-ups marked or resolved: the list of open ones is read again.
  const [followups, setFollowups] = useState(0)
  const followedUp = () => setFollowups((n) => n + 1)
  const go = (patch) => navigate(`#/quality${query({ campaign: campaignId, location: locationId ?? undefined, ...patch })}`)
  if (campaignId === null) return html`<h1>${t('Data quality')}</h1><p>${t('No campaigns yet.')}</p>`
  return html`<section class="quality">
    <h1>${t('Data quality')}</h1>
    <div class="controls">
      <label>${t('Campaign')}
        <select value=${campaignId} onChange=${(e) => go({ campaign: Number(e.target.value) })}>
          ${[...catalog.campaigns].reverse().map((c) => html`<option key=${c.id} value=${c.id}>${c.name}</option>`)}
        </select>
      </label>
      <${LocationSearch} catalog=${catalog} label=${t('Location')} locationId=${locationId} onChange=${(id) => (setLocationId(id), go({ location: id ?? undefined }))} />
    </div>
    <h2>${t('Broken rules')}</h2>
    <p class="hint">${t('Values that break a validation rule: compared with another indicator or with a fixed limit. Whether a dashboard shows a value as good or bad comes from the indicator’s bounds (Catalog, Indicators), not from these rules.')}</p>
    <${Violations} campaignId=${campaignId} locationId=${locationId} catalog=${catalog} />
    <h2>${t('Outliers')}</h2>
    <p class="hint">${t('Values entered or uploaded that are far from what the same place reported in its last campaigns, or outside its range.')}</p>
    <${Outliers} campaignId=${campaignId} locationId=${locationId} catalog=${catalog} mayGenerate=${mayEditRanges} onFollowUp=${followedUp} followupsChanged=${followups} />
    <h2>${t('Follow-up')}</h2>
    <p class="hint">${t('The values of the campaign marked to be checked, in your part of the country, until they are resolved.')}</p>
    <${OpenFollowups} campaignId=${campaignId} catalog=${catalog} changed=${followups} onChange=${followedUp} />
    <h2>${t('Completeness')}</h2>
    <p class="hint">${t('The places that enter values, per parent: those with at least one value of the campaign, and those without.')}</p>
    <${Completeness} campaignId=${campaignId} locationId=${locationId} />
  </section>`
}
