// One chart: read through the API, drawn by ECharts (or as a table), with its numbers in a table view
// whose location names drill down. It marks itself drawn (data-drawn and a performance mark), which is
// what the browser tests time.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { aimFor, chartOption, chartSpec, isMap, isTable, valueAt } from '../chart-data.js'
import { draw, readChart, registerPolygons, tooltipElement } from '../charts.js'
import { formatValue } from '../format.js'
import { html } from '../html.js'

/** Below this width (px) a chart drops its labels for a legend and tooltips. */
const NARROW = 480

/**
 * The values of a chart for this user: as saved, or, when the chart is aimed above a restricted
 * user's part of the country and nothing of hers falls in its selection, her own part.
 */
async function readFor(spec, view, catalog) {
  const aim = aimFor(spec, catalog)
  const data = await readChart(spec, view, catalog)
  if (!aim.aimedAbove || view.locationId != null || data.points.length > 0) return { data, aimedAbove: aim.aimedAbove && view.locationId == null }
  return { data: await readChart(aim.fallback, view, catalog), aimedAbove: true }
}

export function ChartCard({ chart, view, catalog, onDrill }) {
  const spec = useMemo(() => chartSpec(chart.chart_json), [chart])
  const [state, setState] = useState({ data: null, error: null, mapName: '', polygons: 0, aimedAbove: false })
  const [drawn, setDrawn] = useState(false)
  const drawing = useRef(null)
  // A map with no polygon has nothing to draw (ECharts cannot lay out an empty map).
  const noShapes = isMap(spec) && state.polygons === 0

  useEffect(() => {
    let live = true
    setDrawn(false)
    ;(async () => {
      try {
        const { data, aimedAbove } = await readFor(spec, view, catalog)
        const map = isMap(spec) && data.points.length ? await registerPolygons(data, catalog) : null
        if (map) data.centres = map.centres
        if (live) setState({ data, mapName: map?.mapName ?? '', polygons: map?.polygons ?? 0, aimedAbove, error: null })
      } catch (error) {
        if (live) setState({ data: null, error: error.message, mapName: '', polygons: 0, aimedAbove: false })
      }
    })()
    return () => {
      live = false
    }
  }, [spec, view.campaignId, view.locationId, catalog])

  useEffect(() => {
    if (!state.data) return
    const markDrawn = () => {
      performance.mark(`chart drawn: ${chart.uuid ?? chart.title}`)
      setDrawn(true)
    }
    if (isTable(spec) || !drawing.current || state.data.points.length === 0 || noShapes) return markDrawn()
    const byName = (name) => catalog.locations.find((l) => l.name === name)?.id
    const element = drawing.current
    let instance = null
    let narrow = null
    // Drawn once the element has a size, and redrawn when it crosses the narrow width; never at 0 × 0
    // (a card not laid out yet, or leaving the page), where ECharts cannot lay out a map.
    const render = () => {
      if (!element.clientWidth || !element.clientHeight) return
      const nowNarrow = element.clientWidth < NARROW
      if (instance && nowNarrow === narrow) return instance.resize()
      narrow = nowNarrow
      const option = chartOption(spec, state.data, catalog, { mapName: state.mapName, tooltip: tooltipElement, narrow })
      if (instance) {
        instance.resize()
        return instance.setOption(option, true)
      }
      instance = draw(element, option, (name) => byName(name) && onDrill?.(byName(name)))
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

  const title = chart.title ?? 'Chart'
  const table = () => html`<${ValuesTable} spec=${spec} data=${state.data} catalog=${catalog} onDrill=${onDrill} caption=${title} />`
  const scope =
    state.aimedAbove && html`<p class="hint scope">Shown for ${catalog.roots.map((r) => r.name).join(', ')}: the part of the country you can see.</p>`
  const body = state.error
    ? html`<p class="error" role="alert">${state.error}</p>`
    : !state.data
      ? html`<p>Loading…</p>`
      : state.data.points.length === 0
        ? html`<p>No values for this selection.</p>`
        : isTable(spec)
          ? table()
          : noShapes
            ? html`<p>No map shapes for these locations: their numbers follow.</p>${table()}`
            : html`<div class="drawing" ref=${drawing} role="img" aria-label=${`${spec.type}: ${title}`}></div>
              <details><summary aria-label=${`Numbers of ${title}`}>Numbers</summary>${table()}</details>`
  return html`<figure class="chart" data-type=${spec.type} data-drawn=${drawn ? 'true' : 'false'} data-polygons=${state.polygons ?? 0}>
    <figcaption>${title}</figcaption>
    ${scope}
    ${body}
  </figure>`
}

/** Locations × campaigns (or time) as rows, one column per indicator; a location name drills down. */
function ValuesTable({ spec, data, catalog, onDrill, caption }) {
  const indicatorIds = spec.indicator_ids ?? []
  const rows = data.locationIds.flatMap((locationId) => data.keys.map((key) => ({ locationId, key })))
  return html`<div class="table-scroll" tabindex="0" role="region" aria-label=${`Numbers: ${caption}`}><table>
    <caption class="visually-hidden">${caption}</caption>
    <thead><tr><th scope="col">Location</th><th scope="col">${data.over === 'time' ? 'Period' : 'Campaign'}</th>
      ${indicatorIds.map((id) => html`<th scope="col" key=${id}>${catalog.indicatorName.get(id) ?? `Indicator ${id}`}</th>`)}</tr></thead>
    <tbody>
      ${rows.map(
        ({ locationId, key }) => html`<tr key=${`${locationId}-${key.id}`}>
          <th scope="row">${onDrill ? html`<button class="link" onClick=${() => onDrill(locationId)}>${catalog.locationName.get(locationId) ?? `Location ${locationId}`}</button>` : catalog.locationName.get(locationId)}</th>
          <td>${key.label}</td>
          ${indicatorIds.map((id) => html`<td class="number" key=${id}>${formatValue(valueAt(data, id, locationId, key.id), catalog.indicatorFormat.get(id))}</td>`)}
        </tr>`,
      )}
    </tbody>
  </table></div>`
}
