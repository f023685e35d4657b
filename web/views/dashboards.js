// Dashboards: the list, one dashboard's rows of charts (campaign picker, drill-down by location), and
// its editing (add, remove, reorder charts), all saved through the API.
import { useEffect, useMemo, useState } from '/app/vendor/preact-hooks.mjs'
import { api, change, list } from '../api.js'
import { html } from '../html.js'
import { ChartCard } from './chart-card.js'

export function DashboardList({ navigate }) {
  const [dashboards, setDashboards] = useState(null)
  const [error, setError] = useState('')
  useEffect(() => {
    list('/dashboard/?limit=0&order_by=title').then(setDashboards, (e) => setError(e.message))
  }, [])
  const create = async (event) => {
    event.preventDefault()
    const title = new FormData(event.target).get('title')
    try {
      const dashboard = await change('POST', '/dashboard/', { title, rows: [] })
      navigate(`#/dashboard/${dashboard.id}/edit`)
    } catch (e) {
      setError(e.message)
    }
  }
  return html`<h1>Dashboards</h1>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${dashboards === null
      ? html`<p>Loading…</p>`
      : html`<ul class="cards">
          ${dashboards.map((d) => html`<li key=${d.id}><a href=${`#/dashboard/${d.id}`}>${d.title}</a>${d.description ? html`<span> — ${d.description}</span>` : ''}</li>`)}
        </ul>`}
    <form class="inline" onSubmit=${create}>
      <label>New dashboard title <input name="title" required maxlength="255" /></label>
      <button type="submit">Create dashboard</button>
    </form>`
}

/** The charts of a dashboard's rows, in order (a uuid the API could not expand is left out). */
const chartsOf = (dashboard) => (dashboard?.rows ?? []).flatMap((row) => (row?.charts ?? []).filter((c) => typeof c === 'object' && c))

export function DashboardView({ id, catalog }) {
  const [dashboard, setDashboard] = useState(null)
  const [error, setError] = useState('')
  const [campaignId, setCampaignId] = useState('')
  const [locationId, setLocationId] = useState(null)
  useEffect(() => {
    api('GET', `/dashboard/${id}/`).then((res) => (res.status === 200 ? setDashboard(res.body) : setError(res.body?.message ?? String(res.status))))
  }, [id])
  const view = useMemo(() => ({ campaignId: campaignId ? Number(campaignId) : null, locationId }), [campaignId, locationId])
  if (error) return html`<p class="error" role="alert">${error}</p>`
  if (!dashboard) return html`<p>Loading…</p>`
  const path = locationId === null ? [] : catalog.pathTo(locationId)
  return html`<div class="title-bar">
      <h1>${dashboard.title}</h1>
      <a class="button secondary" href=${`#/dashboard/${id}/edit`}>Edit dashboard</a>
    </div>
    ${dashboard.description && html`<p>${dashboard.description}</p>`}
    <div class="controls">
      <label>Campaign
        <select value=${campaignId} onChange=${(e) => setCampaignId(e.target.value)}>
          <option value="">As each chart says</option>
          ${catalog.campaigns.map((c) => html`<option key=${c.id} value=${c.id}>${c.name}</option>`)}
        </select>
      </label>
      <nav aria-label="Location" class="breadcrumb">
        <button class="link" aria-current=${locationId === null ? 'true' : undefined} onClick=${() => setLocationId(null)}>Each chart's locations</button>
        ${path.map((l) => html`<span key=${l.id}> › <button class="link" aria-current=${l.id === locationId ? 'true' : undefined} onClick=${() => setLocationId(l.id)}>${l.name}</button></span>`)}
      </nav>
    </div>
    <p class="hint">Click a location in a chart or its numbers to drill down a level.</p>
    ${(dashboard.rows ?? []).map(
      (row, r) => html`<div class="chart-row" key=${r}>
        ${(row?.charts ?? []).filter((c) => typeof c === 'object' && c).map((chart) => html`<${ChartCard} key=${chart.uuid} chart=${chart} view=${view} catalog=${catalog} onDrill=${setLocationId} />`)}
      </div>`,
    )}
    ${chartsOf(dashboard).length === 0 && html`<p>No charts yet. <a href=${`#/dashboard/${id}/edit`}>Add one</a>.</p>`}`
}

/** Charts per row when a dashboard is saved from the editor. */
const PER_ROW = 2

export function DashboardEditor({ id, navigate }) {
  const [dashboard, setDashboard] = useState(null)
  const [charts, setCharts] = useState([])
  const [allCharts, setAllCharts] = useState([])
  const [adding, setAdding] = useState('')
  const [error, setError] = useState('')
  useEffect(() => {
    Promise.all([change('GET', `/dashboard/${id}/`), list('/custom_chart/?fields=id,uuid,title&limit=0&order_by=title')]).then(([d, all]) => {
      setDashboard(d)
      setCharts(chartsOf(d))
      setAllCharts(all)
    }, (e) => setError(e.message))
  }, [id])
  if (!dashboard) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p>Loading…</p>`
  const move = (from, to) => {
    if (to < 0 || to >= charts.length) return
    const next = charts.slice()
    next.splice(to, 0, next.splice(from, 1)[0])
    setCharts(next)
  }
  const save = async (event) => {
    event.preventDefault()
    const form = new FormData(event.target)
    const rows = []
    for (let i = 0; i < charts.length; i += PER_ROW) rows.push({ layout: PER_ROW, charts: charts.slice(i, i + PER_ROW).map((c) => c.uuid) })
    try {
      await change('PATCH', `/dashboard/${id}/`, { title: form.get('title'), description: form.get('description'), rows })
      navigate(`#/dashboard/${id}`)
    } catch (e) {
      setError(e.message)
    }
  }
  const present = new Set(charts.map((c) => c.uuid))
  return html`<h1>Edit dashboard</h1>
    <form class="stack" onSubmit=${save}>
      <label>Title <input name="title" required maxlength="255" value=${dashboard.title} /></label>
      <label>Description <input name="description" maxlength="1000" value=${dashboard.description} /></label>
      <h2>Charts, in order</h2>
      <ol class="cards">
        ${charts.map(
          (c, i) => html`<li key=${c.uuid} class="chart-item"><span>${c.title}</span>
            <span class="actions">
              <button type="button" class="secondary" aria-label=${`Move ${c.title} up`} onClick=${() => move(i, i - 1)} disabled=${i === 0}>Up</button>
              <button type="button" class="secondary" aria-label=${`Move ${c.title} down`} onClick=${() => move(i, i + 1)} disabled=${i === charts.length - 1}>Down</button>
              <a class="button secondary" href=${`#/chart/${c.id}/edit/${id}`} aria-label=${`Edit ${c.title}`}>Edit</a>
              <button type="button" class="secondary" aria-label=${`Remove ${c.title}`} onClick=${() => setCharts(charts.filter((x) => x.uuid !== c.uuid))}>Remove</button>
            </span></li>`,
        )}
      </ol>
      <div class="inline">
        <label>Add a saved chart
          <select value=${adding} onChange=${(e) => setAdding(e.target.value)}>
            <option value="">Choose a chart</option>
            ${allCharts.filter((c) => !present.has(c.uuid)).map((c) => html`<option key=${c.uuid} value=${c.uuid}>${c.title}</option>`)}
          </select>
        </label>
        <button type="button" class="secondary" disabled=${!adding} onClick=${() => {
          setCharts([...charts, allCharts.find((c) => c.uuid === adding)])
          setAdding('')
        }}>Add chart</button>
        <a class="button secondary" href=${`#/chart/new/${id}`}>Build a new chart</a>
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <div class="inline"><button type="submit">Save dashboard</button><a href=${`#/dashboard/${id}`}>Cancel</a></div>
    </form>`
}
