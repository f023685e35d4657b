// The data browser: indicators × campaigns (or dates) × a location selection → a paged table, and the
// CSV export of exactly that selection (the same API read as a wide CSV: names beside the ids).
import { useEffect, useState } from 'preact/hooks'
import { api, query } from '../api.js'
import { csvName, DATE_GROUPINGS } from '../chart-data.js'
import { firstIndicator } from './chart-builder.js'
import { formatCount, formatPeriod, formatValue } from '../format.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { Checkboxes, LocationPicker } from './fields.js'

const PAGE = 50

/** The API read of a selection (without paging). */
export function selectionRead(selection) {
  const location = { location_id: selection.locationId, location_depth: selection.depth }
  if (selection.over === 'dates') {
    return `/date_datapoint/${query({ indicator__in: selection.indicatorIds, start_date: selection.startDate, end_date: selection.endDate, group_by_time: selection.groupByTime, ...location })}`
  }
  return `/campaign_datapoint/${query({ indicator__in: selection.indicatorIds, campaign__in: selection.campaignIds, ...location })}`
}

const withParams = (path, params) => `${path}${path.includes('?') ? '&' : '?'}${query(params).slice(1)}`

export function DataBrowser({ catalog }) {
  const [selection, setSelection] = useState({
    indicatorIds: [firstIndicator(catalog)?.id].filter((id) => id !== undefined),
    over: 'campaigns',
    campaignIds: catalog.campaigns.slice(-1).map((c) => c.id),
    startDate: '',
    endDate: '',
    groupByTime: '',
    locationId: catalog.roots[0]?.id,
    depth: 1,
  })
  const [offset, setOffset] = useState(0)
  const [page, setPage] = useState(null)
  const [error, setError] = useState('')
  const set = (patch) => {
    setSelection({ ...selection, ...patch })
    setOffset(0)
  }
  const read = selectionRead(selection)
  const ready = selection.indicatorIds.length > 0
  useEffect(() => {
    if (!ready) return setPage(null)
    // Answers can arrive out of order while boxes are being ticked: only the latest selection's counts.
    let latest = true
    api('GET', withParams(read, { limit: PAGE, offset })).then((res) => {
      if (!latest) return
      if (res.status === 200) {
        setPage(res.body)
        setError('')
      } else setError(res.body?.message ?? String(res.status))
    })
    return () => {
      latest = false
    }
  }, [read, offset])
  const total = page?.meta.total_count ?? 0
  const when = (row) =>
    row.campaign_id
      ? catalog.campaignName.get(row.campaign_id)
      : formatPeriod(row.data_date ?? row.time_grouping, row.data_date ? undefined : selection.groupByTime)
  /** Dates and campaigns hold different indicators: switching keeps those that have values of the other kind. */
  const switchOver = (over) => {
    const kind = (i) => (i.resource_name === 'date') === (over === 'dates')
    const kept = selection.indicatorIds.filter((id) => kind(catalog.indicators.find((i) => i.id === id) ?? {}))
    set({
      over,
      indicatorIds: kept.length
        ? kept
        : catalog.indicators
            .filter(kind)
            .slice(0, 1)
            .map((i) => i.id),
    })
  }
  const otherKind = selection.indicatorIds.some((id) => {
    const indicator = catalog.indicators.find((i) => i.id === id)
    return indicator && (indicator.resource_name === 'date') !== (selection.over === 'dates')
  })
  return html`<h1>${t('Data')}</h1>
    <div class="browser">
      <form class="stack" onSubmit=${(e) => e.preventDefault()}>
        <${Checkboxes} legend=${t('Indicators')} options=${catalog.indicators.map((i) => ({ id: i.id, label: i.short_name }))} selected=${selection.indicatorIds} onChange=${(ids) => set({ indicatorIds: ids })} />
        <label>${t('Values over')}
          <select value=${selection.over} onChange=${(e) => switchOver(e.target.value)}>
            <option value="campaigns">${t('Campaigns')}</option><option value="dates">${t('Dates')}</option>
          </select>
        </label>
        ${
          selection.over === 'dates'
            ? html`<label>${t('From')} <input type="date" value=${selection.startDate} onInput=${(e) => set({ startDate: e.target.value })} /></label>
              <label>${t('To')} <input type="date" value=${selection.endDate} onInput=${(e) => set({ endDate: e.target.value })} /></label>
              <label>${t('Group by time')}
                <select value=${selection.groupByTime} onChange=${(e) => set({ groupByTime: e.target.value })}>
                  <option value="">${t('No grouping')}</option>${DATE_GROUPINGS.map(([g, label]) => html`<option key=${g} value=${g}>${label()}</option>`)}
                </select>
              </label>`
            : html`<${Checkboxes} legend=${t('Campaigns')} options=${catalog.campaigns.map((c) => ({ id: c.id, label: c.name }))} selected=${selection.campaignIds} onChange=${(ids) => set({ campaignIds: ids })} />`
        }
        <${LocationPicker} catalog=${catalog} locationId=${selection.locationId} depth=${selection.depth} onChange=${({ locationId, depth }) => set({ locationId, depth })} />
      </form>
      <section aria-label=${t('Values')}>
        ${error && html`<p class="error" role="alert">${error}</p>`}
        ${!ready && html`<p>${t('Choose at least one indicator.')}</p>`}
        ${
          page &&
          html`<div class="inline">
            <p aria-live="polite">${total === 0 ? t('No values') : t('Values {first}–{last} of {total}', { first: offset + 1, last: Math.min(offset + PAGE, total), total: formatCount(total) })}</p>
            <a class="button secondary" href=${`/api/v1${withParams(read, { format: 'csv', shape: 'wide' })}`} download=${csvName(read)}>${t('Download {file}', { file: csvName(read) })}</a>
          </div>
          <p class="hint">${selection.over === 'dates' ? t('The download has a line per location and date, their names beside their ids, and a column per indicator.') : t('The download has a line per location and campaign, their names beside their ids, and a column per indicator.')}</p>
          ${
            total === 0 &&
            otherKind &&
            html`<p class="hint">${selection.over === 'dates' ? t('Some of the indicators chosen hold campaign values: read them over campaigns.') : t('Some of the indicators chosen hold dated values: read them over dates.')}</p>`
          }
          <div class="table-scroll" tabindex="0" role="region" aria-label=${t('Values of the selection')}><table>
            <caption class="visually-hidden">${t('Values of the selection')}</caption>
            <thead><tr><th scope="col">${t('Location')}</th><th scope="col">${t('Campaign or date')}</th><th scope="col">${t('Indicator')}</th><th scope="col">${t('Value')}</th></tr></thead>
            <tbody>${page.objects.map(
              (row, i) => html`<tr key=${i}><td>${catalog.locationName.get(row.location_id) ?? row.location_id}</td><td>${when(row)}</td>
                <td>${catalog.indicatorName.get(row.indicator_id) ?? row.indicator_id}</td><td class="number">${formatValue(row.value, catalog.indicatorFormat.get(row.indicator_id))}</td></tr>`,
            )}</tbody>
          </table></div>
          <div class="inline">
            <button type="button" class="secondary" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE))}>${t('Previous page')}</button>
            <button type="button" class="secondary" disabled=${offset + PAGE >= total} onClick=${() => setOffset(offset + PAGE)}>${t('Next page')}</button>
          </div>`
        }
      </section>
    </div>`
}
