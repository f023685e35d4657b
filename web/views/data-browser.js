// The data browser: indicators × campaigns (or dates) × a location selection → a table of a line per
// location and campaign (or date), a column per indicator (so every indicator chosen is on every page),
// sorted by any column and paged in the page; and the CSV of exactly that selection (the API's wide
// CSV, its percents and yes/no written for people: web/csv-download.js).
import { useMemo, useState } from 'preact/hooks'
import { change, query } from '../api.js'
import { chartData, DATE_GROUPINGS, tableRows } from '../chart-data.js'
import { csvFileName, downloadCsv } from '../csv-download.js'
import { firstIndicator } from './chart-builder.js'
import { formatCount } from '../format.js'
import { html } from '../html.js'
import { useSortableColumns } from './sortable-columns.js'
import { useRead } from './use-read.js'
import { t, tn } from '../i18n.js'
import { Checkboxes, LocationPicker } from './fields.js'
import { ScrollCue, useScrollCue } from './scroll-cue.js'
import { FlagMark, flagKey, useValueFlags } from './value-flags.js'

/** The data browser's sort before a header is clicked. */
const BY_PLACE_NAME = { column: 0, descending: false }

const PAGE = 50

/** DHIS2's path for data value sets, as CSV (plugins/dhis2.ts). */
const DATA_VALUE_SETS = '/api/dataValueSets.csv'

/**
 * The selection's values as a DHIS2 data value set (`/api/dataValueSets.csv`): the values entered or
 * uploaded at and below its location, each data element its indicator's short name, each campaign the
 * day it starts; over dates, the dated values between its days (all of them when it names none).
 */
export function dataValueSetAddress(selection, catalog) {
  const params = new URLSearchParams()
  for (const id of selection.indicatorIds) params.append('dataElement', catalog.indicatorName.get(id) ?? String(id))
  const location = catalog.locations.find((l) => l.id === selection.locationId)
  if (location) params.append('orgUnit', location.location_code)
  params.append('children', 'true')
  if (selection.over === 'dates') {
    params.append('startDate', selection.startDate || '1900-01-01')
    params.append('endDate', selection.endDate || '2999-12-31')
    return `${DATA_VALUE_SETS}?${params}`
  }
  for (const id of selection.campaignIds) {
    const start = catalog.campaigns.find((c) => c.id === id)?.start_date
    if (start) params.append('period', String(start).slice(0, 10).replaceAll('-', ''))
  }
  return `${DATA_VALUE_SETS}?${params}`
}

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
  // By place name until a header is clicked: the API answers in its own order, which no reader sees.
  const [sort, heading] = useSortableColumns(() => setOffset(0), BY_PLACE_NAME)
  const set = (patch) => {
    setSelection({ ...selection, ...patch })
    setOffset(0)
  }
  const read = selectionRead(selection)
  const ready = selection.indicatorIds.length > 0
  // The selection the values were read for: the columns change when its values arrive.
  const readPage = () => (ready ? change('GET', withParams(read, { limit: 0 })).then((body) => ({ ...body, asked: selection })) : Promise.resolve(null))
  const { value: page, error: failed } = useRead(readPage, [read], null)
  const error = failed?.message ?? ''
  // The whole selection read once, as a table chart's: a line per location and campaign (or date).
  const indicatorIds = page ? page.asked.indicatorIds : []
  const rows = useMemo(() => {
    if (!page) return []
    const over = page.asked.over === 'dates' ? 'time' : 'campaigns'
    const objects = page.objects.map((o) => (o.data_date ? { ...o, time_grouping: o.data_date } : o))
    return tableRows(chartData({ groupByTime: page.asked.groupByTime }, { over, path: read, where: {} }, objects, catalog), indicatorIds, catalog, sort)
  }, [page, sort])
  const flags = useValueFlags(page?.asked.over === 'campaigns' ? page.asked.campaignIds : null, page?.asked.locationId, catalog)
  const total = rows.length
  const shown = rows.slice(offset, offset + PAGE)
  const [scroller, more] = useScrollCue()
  // On a phone the selection starts folded, so the values are on the first screen.
  const [unfolded] = useState(() => !window.matchMedia('(max-width: 48rem)').matches)
  const csv = withParams(read, { format: 'csv', shape: 'wide' })
  const file = csvFileName(csv, catalog)
  const otherKind = selection.indicatorIds.some((id) => {
    const indicator = catalog.indicators.find((i) => i.id === id)
    return indicator && (indicator.resource_name === 'date') !== (selection.over === 'dates')
  })
  return html`<h1>${t('Data')}</h1>
    <div class="browser">
      <${Selection} catalog=${catalog} selection=${selection} set=${set} unfolded=${unfolded} />
      <section aria-label=${t('Values')}>
        ${error && html`<p class="error" role="alert">${error}</p>`}
        ${!ready && html`<p>${t('Choose at least one indicator.')}</p>`}
        ${
          page &&
          html`<div class="inline">
            <p aria-live="polite">${total === 0 ? t('No values') : t('Rows {first}–{last} of {total}', { first: formatCount(offset + 1), last: formatCount(Math.min(offset + PAGE, total)), total: formatCount(total) })}</p>
            <a class="button secondary" href=${`/api/v1${csv}`} download=${file} onClick=${(e) => downloadCsv(e, csv, catalog)}>${t('Download {file}', { file })}</a>
            <a class="button secondary" href=${dataValueSetAddress(selection, catalog)} download="dataValueSet.csv">${t('Download as a DHIS2 data value set')}</a>
          </div>
          <p class="hint">${selection.over === 'dates' ? t('The download has a line per location and date, their names beside their ids, and a column per indicator.') : t('The download has a line per location and campaign, their names beside their ids, and a column per indicator.')}</p>
          ${
            total === 0 &&
            otherKind &&
            html`<p class="hint">${selection.over === 'dates' ? t('Some of the indicators chosen hold campaign values: read them over campaigns.') : t('Some of the indicators chosen hold dated values: read them over dates.')}</p>`
          }
          <${ScrollCue} more=${more} />
          <div class="table-scroll" ref=${scroller} tabindex="0" role="region" aria-label=${t('Values of the selection')}><table>
            <caption class="visually-hidden">${t('Values of the selection')}</caption>
            <thead><tr>${heading(t('Location'), 0)}${heading(t('Campaign or date'), 1)}${indicatorIds.map((id, i) => heading(catalog.indicatorName.get(id) ?? String(id), 2 + i))}</tr></thead>
            <tbody>${shown.map(
              (row) => html`<tr key=${`${row.locationId}-${row.key.id}`}><th scope="row">${row.location}</th><td>${row.key.label}</td>
                ${row.shown.map((value, i) => html`<td class="number" key=${i}>${value}<${FlagMark} words=${flags.get(flagKey(row.locationId, row.key.id, indicatorIds[i]))} /></td>`)}</tr>`,
            )}</tbody>
          </table></div>
          <${Pages} offset=${offset} total=${total} onOffset=${setOffset} />`
        }
      </section>
    </div>`
}

/** What the table reads: the indicators, over campaigns or dates, and where. */
function Selection({ catalog, selection, set, unfolded }) {
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
  return html`<details class="selection" open=${unfolded}>
      <summary>${t('Selection')} (${tn(selection.indicatorIds.length, '{n} indicator', '{n} indicators')})</summary>
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
      </details>`
}

/** The previous and next pages of the table. */
function Pages({ offset, total, onOffset }) {
  return html`<div class="inline">
    <button type="button" class="secondary" disabled=${offset === 0} onClick=${() => onOffset(Math.max(0, offset - PAGE))}>${t('Previous page')}</button>
    <button type="button" class="secondary" disabled=${offset + PAGE >= total} onClick=${() => onOffset(offset + PAGE)}>${t('Next page')}</button>
  </div>`
}
