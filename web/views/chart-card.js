// One chart: read through the API, drawn by ECharts (or as a table), with its numbers in a table view
// whose location names drill down. It marks itself drawn (data-drawn and a performance mark), which is
// what the browser tests time.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { chartOption, chartSpec, drawsStatuses, isMap, isTable, tableRows, typeName } from '../chart-data.js'
import { csvFileName, downloadCsv } from '../csv-download.js'
import { draw, readChartFor, registerPolygons, tooltipElement } from '../charts.js'
import { chartSubtitle, drawnOnly } from '../chart-parts.js'
import { formatCount } from '../format.js'
import { statusClass, statusLegend, statusWord } from '../status.js'
import { t, tn } from '../i18n.js'
import { html } from '../html.js'
import { useSortableColumns } from './sortable-columns.js'
import { useRead } from './use-read.js'
import { ExportLinks } from './export-links.js'
import { ScrollCue, useScrollCue } from './scroll-cue.js'
import { FlagMark, flagKey, useValueFlags } from './value-flags.js'

/** Below this width (px) a chart drops its labels for a legend and tooltips. */
const NARROW = 480

/** A chart's rows (from the dashboard's data when it holds them), and a map's shapes; a failure said on the card. */
async function chartState(chart, spec, view, catalog, dashboardData, read) {
  try {
    const prefetched = await dashboardData?.then((d) => d?.charts?.[chart.id])
    const { data, aimedAbove } = await readChartFor(spec, view, catalog, prefetched, read)
    const map = isMap(spec) && data.points.length ? await registerPolygons(data, catalog, { read }) : null
    if (map) data.centres = map.centres
    return { data, mapName: map?.mapName ?? '', polygons: map?.polygons ?? 0, aimedAbove, error: null }
  } catch (error) {
    return { data: null, error: error.message, mapName: '', polygons: 0, aimedAbove: false }
  }
}

/** An option whose items show a hand only where a click drills down (ECharts shows one on every item). */
const pointerWhereDrillable = (option, drillable) =>
  drillable ? option : { ...option, series: option.series.map((series) => ({ ...series, cursor: 'default' })) }

/**
 * The words of the flags (a broken rule, an open follow-up) of a chart's values over campaigns, by
 * indicator, location and campaign, for its tooltips and table: read through the API, so only for the
 * app's own reader (`ownReader`), not a shared link's, who has no access to it. A tooltip asks when it
 * shows: flags arriving after the drawing do not draw it again.
 */
function useChartFlags(data, view, catalog, ownReader) {
  const flagged = ownReader && data?.over === 'campaigns' ? data.keys.map((k) => k.id) : null
  const flags = useValueFlags(flagged, view.locationId ?? undefined, catalog)
  const latest = useRef(flags)
  latest.current = flags
  return (indicatorId, locationId, key) => latest.current.get(flagKey(locationId, key, indicatorId))
}

/**
 * A drill-down to a location's children, and the location drilled at that has none (the card says so
 * instead of drawing nothing); null while there is none.
 */
function useDrill(onDrill, catalog) {
  const [nothingBelow, setNothingBelow] = useState(null)
  const drill =
    onDrill &&
    ((locationId) => {
      if (catalog.hasChildren && !catalog.hasChildren(locationId)) return setNothingBelow(locationId)
      setNothingBelow(null)
      onDrill(locationId)
    })
  return [drill, nothingBelow, setNothingBelow]
}

/**
 * `dashboardData`: the dashboard's data (a promise of `GET /dashboard/<id>/data/`'s answer, or null),
 * from which the card takes its rows instead of reading them itself; `exportBase`: where its exports
 * are asked, when not the API's own route (a shared link's, without a CSV); `read`: how it reads
 * what the dashboard's data does not hold (the API, by default).
 */
export function ChartCard({ chart, view, catalog, onDrill, dashboardData = null, exportBase = undefined, read = undefined }) {
  const spec = useMemo(() => chartSpec(chart.chart_json), [chart])
  const [drawn, setDrawn] = useState(false)
  const drawing = useRef(null)
  const deps = [spec, view.campaignId, view.locationId, view.startDate, view.endDate, catalog, dashboardData]
  const readChart = () => chartState(chart, spec, view, catalog, dashboardData, read)
  const [drill, nothingBelow, setNothingBelow] = useDrill(onDrill, catalog)
  const { value: state } = useRead(readChart, deps, { data: null, error: null, mapName: '', polygons: 0, aimedAbove: false })
  // Whether its drawing uses status colours (and so shows their legend): once per read, not per render.
  const statusColours = useMemo(() => state.data?.points.length > 0 && drawsStatuses(spec, state.data, catalog), [state])
  const flagsOf = useChartFlags(state.data, view, catalog, read === undefined)
  useEffect(() => {
    setDrawn(false)
    setNothingBelow(null)
  }, deps)
  // A map with no polygon has nothing to draw (ECharts cannot lay out an empty map).
  const noShapes = isMap(spec) && state.polygons === 0

  useEffect(() => {
    if (!state.data) return
    const markDrawn = () => {
      performance.mark(`chart-drawn:${chart.uuid ?? chart.title}`)
      setDrawn(true)
    }
    if (isTable(spec) || !drawing.current || state.data.points.length === 0 || noShapes) return markDrawn()
    const byName = (name) => catalog.locations.find((l) => l.name === name)?.id
    const element = drawing.current
    let instance = null
    let narrow = null
    let drawnWidth = 0
    // Drawn once the element has a size, and drawn again when it crosses the narrow width or its width
    // changes by a tenth (its value labels, category labels and legend are laid out for a width); never
    // at 0 × 0 (a card not laid out yet, or leaving the page), where ECharts cannot lay out a map.
    const render = () => {
      const width = element.clientWidth
      if (!width || !element.clientHeight) return
      const nowNarrow = width < NARROW
      if (instance && nowNarrow === narrow && Math.abs(width - drawnWidth) < width / 10) return instance.resize()
      narrow = nowNarrow
      drawnWidth = width
      // Framed: the card shows the subtitle and the status legend around the drawing, as text.
      const option = pointerWhereDrillable(
        chartOption(spec, state.data, catalog, { mapName: state.mapName, tooltip: tooltipElement, narrow, framed: true, width, flagsOf }),
        Boolean(drill) && state.data.locationIds.some((id) => !catalog.hasChildren || catalog.hasChildren(id)),
      )
      if (instance) {
        instance.resize()
        return instance.setOption(option, true)
      }
      instance = draw(element, option, (name) => byName(name) && drill?.(byName(name)))
      instance.on('finished', markDrawn)
    }
    const resize = new ResizeObserver(render)
    resize.observe(element)
    render()
    return () => {
      resize.disconnect()
      instance?.dispose()
    }
  }, [state])

  const title = chart.title ?? t('Chart')
  // Through a shared link the API's own CSV would ask for credentials: its exports come through the link (ExportLinks).
  const table = () =>
    html`<${ValuesTable} spec=${spec} data=${state.data} catalog=${catalog} onDrill=${drill} caption=${title} csv=${exportBase ? undefined : state.data.csv} flagsOf=${flagsOf} />`
  const scope =
    state.aimedAbove &&
    html`<p class="hint scope">${t('Shown for {places}: the part of the country you can see.', { places: catalog.roots.map((r) => r.name).join(', ') })}</p>`
  const body = state.error
    ? html`<p class="error" role="alert">${state.error}</p>`
    : !state.data
      ? html`<p>${t('Loading…')}</p>`
      : state.data.points.length === 0
        ? html`<p>${t('No values for this selection.')}</p>`
        : isTable(spec)
          ? table()
          : noShapes
            ? html`<p>${t('No map shapes for these locations: their numbers follow.')}</p>${table()}`
            : html`<div class="drawing" ref=${drawing} role="img" aria-label=${`${typeName(spec.type)}: ${title}`}></div>
              <details class="numbers"><summary aria-label=${t('Numbers of {title}', { title })}>${t('Numbers')}</summary>${table()}</details>`
  // Where and when its values are, from what was read (a drill-down or a picked campaign changes it).
  const subtitle = state.data?.points.length > 0 ? chartSubtitle(spec, state.data, catalog) : ''
  const only = state.data?.points.length > 0 ? drawnOnly(spec, state.data, catalog) : ''
  // A chart keeping its own campaigns (`pinned`) under a dashboard showing another campaign says so:
  // the picker above does not change it.
  const keepsOwn =
    spec.pinned && spec.campaign_ids?.length > 0 && view.campaignId != null && !(spec.campaign_ids.length === 1 && spec.campaign_ids[0] === view.campaignId)
  return html`<figure class="chart" data-type=${spec.type} data-drawn=${drawn ? 'true' : 'false'} data-polygons=${state.polygons ?? 0}>
    <figcaption>${title}${subtitle && html`<span class="subtitle">${subtitle}</span>`}</figcaption>
    ${scope}
    ${only && html`<p class="hint drawn-only">${only}</p>`}
    ${keepsOwn && html`<p class="hint kept-campaign">${t('This chart keeps its own campaign, whatever campaign the dashboard shows.')}</p>`}
    <p class="hint nothing-below" role="status">${nothingBelow !== null && t('{place} has no locations below it: there is nothing further to drill down to.', { place: catalog.locationName.get(nothingBelow) ?? t('Location {id}', { id: nothingBelow }) })}</p>
    ${body}
    ${statusColours && html`<${StatusLegend} indicatorIds=${spec.indicator_ids ?? []} catalog=${catalog} />`}
    ${chart.id && state.data?.points.length > 0 && html`<${ExportLinks} target=${{ chart_id: chart.id }} view=${view} label=${title} csv=${exportBase ? undefined : state.data.csv} catalog=${catalog} base=${exportBase} />`}
  </figure>`
}

/** What the colours of values say: each bounded indicator's statuses with their limits. */
function StatusLegend({ indicatorIds, catalog }) {
  const bounded = indicatorIds.filter((id) => catalog.indicatorBounds.has(id))
  if (!bounded.length) return null
  return bounded.map(
    (id) => html`<ul class="status-legend" key=${id} aria-label=${t('Statuses of {indicator}', { indicator: catalog.indicatorName.get(id) })}>
      ${bounded.length > 1 && html`<li>${catalog.indicatorName.get(id)}:</li>`}
      ${statusLegend(catalog.indicatorBounds.get(id), catalog.indicatorFormat.get(id)).map(
        (item, i) => html`<li key=${i}><span class=${`swatch ${item.className}`} aria-hidden="true"></span>${item.label}</li>`,
      )}
    </ul>`,
  )
}

/** Rows of a table view shown at once: a table of ten thousand districts stays one page in the page. */
const PAGE = 25

/**
 * Locations × campaigns (or time) as rows, one column per indicator, a page at a time, sorted by any
 * column; a location name drills down; the CSV of every row is a click away.
 */
function ValuesTable({ spec, data, catalog, onDrill, caption, csv, flagsOf }) {
  const indicatorIds = spec.indicator_ids ?? []
  const [offset, setOffset] = useState(0)
  const [sort, heading] = useSortableColumns(() => setOffset(0))
  // New values (another campaign, a drill-down) start at the first page.
  useEffect(() => setOffset(0), [data])
  const rows = useMemo(() => tableRows(data, indicatorIds, catalog, sort), [data, sort])
  const shown = rows.slice(offset, offset + PAGE)
  const [scroller, more] = useScrollCue()
  // One campaign (or period) repeated on every row says nothing the subtitle does not: a phone leaves it out.
  const oneKey = data.keys.length === 1
  return html`<${ScrollCue} more=${more} /><div class="table-scroll" ref=${scroller} tabindex="0" role="region" aria-label=${t('Numbers: {caption}', { caption })}><table class=${oneKey ? 'one-key' : undefined}>
      <caption class="visually-hidden">${caption}</caption>
      <thead><tr>${heading(t('Location'), 0)}${heading(data.over === 'time' ? t('Period') : data.over === 'classes' ? t('Class') : t('Campaign'), 1)}
        ${indicatorIds.map((id, i) => heading(catalog.indicatorName.get(id) ?? t('Indicator {id}', { id }), 2 + i))}</tr></thead>
      <tbody>
        ${shown.map(
          (row) => html`<tr key=${`${row.locationId}-${row.key.id}`}>
            <th scope="row">${onDrill && (!catalog.hasChildren || catalog.hasChildren(row.locationId)) ? html`<button class="link" onClick=${() => onDrill(row.locationId)}>${row.location}</button>` : row.location}</th>
            <td>${row.key.label}</td>
            ${row.values.map((_, i) => {
              const status = row.statuses[i]
              const coverage = row.coverages[i]
              return html`<td class=${`number ${statusClass(status, catalog.indicatorBounds.get(indicatorIds[i]))}`} key=${i}>${row.shown[i]}${status && html`<span class="visually-hidden"> (${statusWord(status)})</span>`}${coverage && html`<small class=${`coverage${row.incomplete[i] ? ' incomplete' : ''}`}>${coverage}</small>`}<${FlagMark} words=${flagsOf(indicatorIds[i], row.locationId, row.key.id)} /></td>`
            })}
          </tr>`,
        )}
      </tbody>
    </table></div>
    <div class="inline table-pages">
      <p>${rows.length > PAGE ? t('Rows {first}–{last} of {total}', { first: formatCount(offset + 1), last: formatCount(Math.min(offset + PAGE, rows.length)), total: formatCount(rows.length) }) : tn(rows.length, '{n} row', '{n} rows', { n: formatCount(rows.length) })}</p>
      ${
        rows.length > PAGE &&
        html`<button class="secondary" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE))} aria-label=${t('Previous rows of {caption}', { caption })}>${t('Previous')}</button>
        <button class="secondary" disabled=${offset + PAGE >= rows.length} onClick=${() => setOffset(offset + PAGE)} aria-label=${t('Next rows of {caption}', { caption })}>${t('Next')}</button>`
      }
      ${csv && html`<a href=${`/api/v1${csv}`} download=${csvFileName(csv, catalog)} onClick=${(e) => downloadCsv(e, csv, catalog)}>${t('CSV of every row')}</a>`}
    </div>`
}
