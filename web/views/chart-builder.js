// The chart builder: type, indicators, campaigns or dates, location and depth, grouping; a live
// preview; saved through the API as `chart_json` in the original front-end's shape, and put on the
// dashboard it was opened from.
import { useEffect, useMemo, useState } from '/app/vendor/preact-hooks.mjs'
import { change } from '../api.js'
import { CHART_TYPES, TIME_GROUPINGS, isTimeChart } from '../charts.js'
import { html } from '../html.js'
import { ChartCard } from './chart-card.js'
import { Checkboxes, LocationPicker } from './fields.js'

const NO_VIEW = { campaignId: null, locationId: null }

const blankChart = (catalog) => ({
  type: 'ColumnChart',
  indicator_ids: catalog.campaignIndicators.slice(0, 1).map((i) => i.id),
  campaign_ids: catalog.campaigns.slice(0, 1).map((c) => c.id),
  location_ids: catalog.roots.slice(0, 1).map((l) => l.id),
  location_depth: 1,
  groupBy: 'indicator',
})

export function ChartBuilder({ chartId, dashboardId, catalog, navigate }) {
  const [title, setTitle] = useState('')
  const [spec, setSpec] = useState(chartId ? null : blankChart(catalog))
  const [saved, setSaved] = useState(null)
  const [error, setError] = useState('')
  useEffect(() => {
    if (!chartId) return
    change('GET', `/custom_chart/${chartId}/`).then((c) => {
      setSaved(c)
      setTitle(c.title)
      setSpec(c.chart_json)
    }, (e) => setError(e.message))
  }, [chartId])
  const preview = useMemo(() => spec && { uuid: 'preview', title: title || 'Preview', chart_json: spec }, [spec, title])
  if (!spec) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p>Loading…</p>`

  const set = (patch) => setSpec({ ...spec, ...patch })
  const overTime = isTimeChart(spec)
  const overDates = (dates) =>
    dates
      ? set({ campaign_ids: [], groupByTime: spec.groupByTime || 'month', start_date: spec.start_date || '2016-01-01', end_date: spec.end_date || '2016-12-31' })
      : set({ campaign_ids: catalog.campaigns.slice(0, 1).map((c) => c.id), groupByTime: undefined, start_date: undefined, end_date: undefined })
  const save = async (event) => {
    event.preventDefault()
    setError('')
    try {
      const chart = saved
        ? await change('PATCH', `/custom_chart/${saved.id}/`, { title, chart_json: spec })
        : await change('POST', '/custom_chart/', { uuid: crypto.randomUUID(), title, chart_json: spec })
      if (dashboardId && !saved) {
        const dashboard = await change('GET', `/dashboard/${dashboardId}/`)
        const rows = (dashboard.rows ?? []).map((row) => ({ ...row, charts: (row.charts ?? []).map((c) => (typeof c === 'object' ? c.uuid : c)) }))
        rows.push({ layout: 1, charts: [chart.uuid] })
        await change('PATCH', `/dashboard/${dashboardId}/`, { rows })
      }
      navigate(dashboardId ? `#/dashboard/${dashboardId}` : '#/')
    } catch (e) {
      setError(e.message)
    }
  }
  return html`<h1>${saved ? 'Edit chart' : 'New chart'}</h1>
    <div class="builder">
      <form class="stack" onSubmit=${save}>
        <label>Title <input value=${title} required maxlength="255" onInput=${(e) => setTitle(e.target.value)} /></label>
        <label>Chart type
          <select value=${spec.type} onChange=${(e) => set({ type: e.target.value })}>
            ${CHART_TYPES.map((t) => html`<option key=${t} value=${t}>${t}</option>`)}
          </select>
        </label>
        <${Checkboxes} legend="Indicators" options=${catalog.indicators.map((i) => ({ id: i.id, label: i.short_name }))} selected=${spec.indicator_ids ?? []} onChange=${(ids) => set({ indicator_ids: ids })} />
        <fieldset><legend>Values over</legend>
          <label class="choice"><input type="radio" name="over" checked=${!overTime} onChange=${() => overDates(false)} /> Campaigns</label>
          <label class="choice"><input type="radio" name="over" checked=${overTime} onChange=${() => overDates(true)} /> Dates</label>
        </fieldset>
        ${overTime
          ? html`<label>From <input type="date" value=${spec.start_date ?? ''} onInput=${(e) => set({ start_date: e.target.value })} /></label>
              <label>To <input type="date" value=${spec.end_date ?? ''} onInput=${(e) => set({ end_date: e.target.value })} /></label>
              <label>Group by time
                <select value=${spec.groupByTime} onChange=${(e) => set({ groupByTime: e.target.value })}>${TIME_GROUPINGS.map((g) => html`<option key=${g} value=${g}>${g}</option>`)}</select>
              </label>`
          : html`<${Checkboxes} legend="Campaigns" options=${catalog.campaigns.map((c) => ({ id: c.id, label: c.name }))} selected=${spec.campaign_ids ?? []} onChange=${(ids) => set({ campaign_ids: ids })} />`}
        <${LocationPicker} catalog=${catalog} locationId=${spec.location_ids?.[0]} depth=${spec.location_depth ?? 0}
          onChange=${({ locationId, depth }) => set({ location_ids: [locationId], location_depth: depth })} />
        <label>Group by
          <select value=${spec.groupBy ?? 'indicator'} onChange=${(e) => set({ groupBy: e.target.value })}>
            <option value="indicator">Indicator</option><option value="location">Location</option>
          </select>
        </label>
        ${error && html`<p class="error" role="alert">${error}</p>`}
        <div class="inline"><button type="submit">Save chart</button><a href=${dashboardId ? `#/dashboard/${dashboardId}` : '#/'}>Cancel</a></div>
      </form>
      <section aria-label="Preview"><${ChartCard} chart=${preview} view=${NO_VIEW} catalog=${catalog} /></section>
    </div>`
}
