// Dashboards: the list, one dashboard's rows of charts (campaign picker and drill-down kept in the
// address), and its editing (add, build, remove, reorder charts) as a draft that survives leaving the
// page, saved through the API. Who may not change a dashboard duplicates it to edit.
import { useEffect, useMemo, useState } from 'preact/hooks'
import { api, change, freeTitle, list, mayChange } from '../api.js'
import { clearDraft, loadDraft, saveDraft } from '../drafts.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { routeHash } from '../route.js'
import { ExportLinks } from './export-links.js'
import { ShareLinks } from './share-links.js'
import { ChartRows, DrillDown } from './dashboard-parts.js'
import { DateRange, isDate, viewParams, viewQuery } from './view-filters.js'
import { LocationSearch } from './location-search.js'

export function DashboardList({ navigate }) {
  const [dashboards, setDashboards] = useState(null)
  const [error, setError] = useState('')
  useEffect(() => {
    list('/dashboard/?limit=0&order_by=title').then(setDashboards, (e) => setError(e.message))
  }, [])
  const create = async (event) => {
    event.preventDefault()
    const title = String(new FormData(event.target).get('title'))
    try {
      const dashboard = await change('POST', '/dashboard/', { title, rows: [] })
      navigate(`#/dashboard/${dashboard.id}/edit`)
    } catch (e) {
      setError(e.code === 'UNIQUE_VIOLATION' ? await takenTitle('dashboard', title) : e.message)
    }
  }
  return html`<h1>${t('Dashboards')}</h1>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      dashboards === null
        ? html`<p>${t('Loading…')}</p>`
        : html`<ul class="cards">
          ${dashboards.map((d) => html`<li key=${d.id}><a href=${`#/dashboard/${d.id}`}>${d.title}</a>${d.description ? html`<span> — ${d.description}</span>` : ''}</li>`)}
        </ul>`
    }
    <form class="inline" onSubmit=${create}>
      <label>${t('New dashboard title')} <input name="title" required maxlength="255" /></label>
      <button type="submit">${t('Create dashboard')}</button>
    </form>`
}

/** What to say when a title is taken: titles are shared by everyone, so name a free one. */
export async function takenTitle(resource, title) {
  const free = await freeTitle(resource, title)
  return resource === 'dashboard'
    ? t('“{title}” is already the title of a dashboard (titles are shared by everyone). “{free}” is free.', { title, free })
    : t('“{title}” is already the title of a chart (titles are shared by everyone). “{free}” is free.', { title, free })
}

/** The charts of a dashboard's rows, in order (a uuid the API could not expand is left out). */
const chartsOf = (dashboard) => (dashboard?.rows ?? []).flatMap((row) => (row?.charts ?? []).filter((c) => typeof c === 'object' && c))

/** A copy of a dashboard under a free title, owned by whoever copies it; returns its id. */
async function duplicate(dashboard) {
  const title = await freeTitle('dashboard', t('{title} (copy)', { title: dashboard.title }))
  const rows = (dashboard.rows ?? []).map((row) => ({ ...row, charts: (row?.charts ?? []).map((c) => (typeof c === 'object' && c ? c.uuid : c)) }))
  return (await change('POST', '/dashboard/', { title, description: dashboard.description ?? '', rows })).id
}

export function DashboardView({ id, catalog, user, params, navigate }) {
  const [dashboard, setDashboard] = useState(null)
  const [error, setError] = useState('')
  useEffect(() => {
    api('GET', `/dashboard/${id}/`).then((res) => (res.status === 200 ? setDashboard(res.body) : setError(res.body?.message ?? String(res.status))))
  }, [id])
  // The view is the address: a campaign and a location this user may see, else the charts' own.
  const campaignId = catalog.campaignName.has(Number(params.campaign)) ? Number(params.campaign) : null
  const locationId = catalog.locationName.has(Number(params.location)) ? Number(params.location) : null
  const startDate = isDate(params.start_date) ? params.start_date : null
  const endDate = isDate(params.end_date) ? params.end_date : null
  const view = useMemo(() => ({ campaignId, locationId, startDate, endDate }), [campaignId, locationId, startDate, endDate])
  // Every chart's rows in one request (null when it fails: each chart then reads its own).
  const dashboardData = useMemo(
    () =>
      api('GET', `/dashboard/${id}/data/${viewQuery(view)}`).then(
        (res) => (res.status === 200 ? res.body : null),
        () => null,
      ),
    [id, view],
  )
  const offered = useCampaignsWithData(locationId ?? catalog.roots[0]?.id, catalog)
  const go = (patch) => navigate(routeHash(`#/dashboard/${id}`, { ...viewParams(view), ...patch }))
  if (error) return html`<p class="error" role="alert">${error}</p>`
  if (!dashboard) return html`<p>${t('Loading…')}</p>`
  const copyToEdit = async () => {
    try {
      navigate(`#/dashboard/${await duplicate(dashboard)}/edit`)
    } catch (e) {
      setError(e.message)
    }
  }
  return html`<div class="title-bar">
      <h1>${dashboard.title}</h1>
      <span class="actions">
        ${
          mayChange(user, dashboard)
            ? html`<a class="button secondary" href=${`#/dashboard/${id}/edit`}>${t('Edit dashboard')}</a>
              <button class="secondary" onClick=${copyToEdit}>${t('Duplicate')}</button>`
            : html`<button class="secondary" onClick=${copyToEdit}>${t('Duplicate to edit')}</button>`
        }
        <${ExportLinks} target=${{ dashboard_id: id }} view=${view} label=${t('this dashboard')} />
      </span>
    </div>
    ${dashboard.description && html`<p>${dashboard.description}</p>`}
    ${params.location && locationId === null && html`<p class="hint">${t('The location in this link is not one you can see: each chart shows its own.')}</p>`}
    <div class="controls">
      <label>${t('Campaign')}
        <select value=${campaignId ?? ''} onChange=${(e) => go({ campaign: e.target.value })}>
          <option value="">${t('As each chart says')}</option>
          ${byCampaignType(offered, campaignId, catalog).map(
            ([type, campaigns]) =>
              html`<optgroup key=${type} label=${type}>${campaigns.map((c) => html`<option key=${c.id} value=${c.id}>${c.name}</option>`)}</optgroup>`,
          )}
        </select>
      </label>
      <${DateRange} view=${view} onChange=${go} />
      <${LocationSearch} catalog=${catalog} label=${t('Location')} locationId=${locationId} allowNone=${true} noneLabel=${t("Each chart's locations")} onChange=${(id) => go({ location: id })} />
      <${DrillDown} catalog=${catalog} view=${view} onChange=${go} />
    </div>
    <p class="hint">${t('Click a location in a chart or its numbers to drill down a level. The address keeps this view: copy it to share it.')}</p>
    ${(user.is_superuser || dashboard.owner_id === user.id) && html`<${ShareLinks} dashboardId=${id} view=${view} catalog=${catalog} />`}
    <${ChartRows} dashboard=${dashboard} view=${view} catalog=${catalog} onChange=${go} cardProps=${{ dashboardData }} />
    ${chartsOf(dashboard).length === 0 && html`<p>${t('No charts yet.')}${mayChange(user, dashboard) && html` <a href=${`#/dashboard/${id}/edit`}>${t('Add one')}</a>`}</p>`}`
}

/**
 * The campaigns with values at a location or below it (`campaign/?has_data_for`): what the campaign
 * picker offers; every campaign until the answer is in.
 */
function useCampaignsWithData(locationId, catalog) {
  const [campaigns, setCampaigns] = useState(catalog.campaigns)
  useEffect(() => {
    if (locationId == null) return
    let live = true
    list(`/campaign/?has_data_for=${locationId}&fields=id&limit=0`).then(
      (found) => {
        const ids = new Set(found.map((c) => c.id))
        if (live) setCampaigns(catalog.campaigns.filter((c) => ids.has(c.id)))
      },
      () => live && setCampaigns(catalog.campaigns),
    )
    return () => {
      live = false
    }
  }, [locationId, catalog])
  return campaigns
}

/** Campaigns grouped by their type's name, latest first in each; the picked one kept even without data here. */
function byCampaignType(campaigns, pickedId, catalog) {
  const shown =
    pickedId != null && !campaigns.some((c) => c.id === pickedId) ? [...campaigns, catalog.campaigns.find((c) => c.id === pickedId)].filter(Boolean) : campaigns
  const groups = new Map()
  for (const c of [...shown].reverse()) {
    const type = catalog.campaignTypeName.get(c.campaign_type_id) ?? t('Campaigns')
    groups.set(type, [...(groups.get(type) ?? []), c])
  }
  return [...groups].sort(([a], [b]) => a.localeCompare(b))
}

/** Charts per row when a dashboard is saved from the editor. */
const PER_ROW = 2

/** The editor's draft of a dashboard: what the page shows and what saving sends. */
const draftOf = (dashboard) => ({
  title: dashboard.title,
  description: dashboard.description ?? '',
  uuids: chartsOf(dashboard).map((c) => c.uuid),
  changed: false,
})

export function DashboardEditor({ id, navigate }) {
  const [dashboard, setDashboard] = useState(null)
  const [draft, setDraftState] = useState(null)
  const [allCharts, setAllCharts] = useState([])
  const [adding, setAdding] = useState('')
  const [error, setError] = useState('')
  useEffect(() => {
    Promise.all([change('GET', `/dashboard/${id}/`), list('/custom_chart/?fields=id,uuid,title,owner_id&limit=0&order_by=title')]).then(
      ([d, all]) => {
        setDashboard(d)
        setDraftState(loadDraft('dashboard', id) ?? draftOf(d))
        setAllCharts(all)
      },
      (e) => setError(e.message),
    )
  }, [id])
  // Leaving the page with unsaved changes asks first.
  useEffect(() => {
    if (!draft?.changed) return
    const warn = (event) => event.preventDefault()
    addEventListener('beforeunload', warn)
    return () => removeEventListener('beforeunload', warn)
  }, [draft?.changed])
  if (!dashboard || !draft) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p>${t('Loading…')}</p>`
  const setDraft = (patch) => {
    const next = { ...draft, ...patch, changed: true }
    saveDraft('dashboard', id, next)
    setDraftState(next)
  }
  const byUuid = new Map(allCharts.map((c) => [c.uuid, c]))
  const charts = draft.uuids.map((uuid) => byUuid.get(uuid) ?? { uuid, title: uuid })
  const move = (from, to) => {
    if (to < 0 || to >= charts.length) return
    const uuids = draft.uuids.slice()
    uuids.splice(to, 0, uuids.splice(from, 1)[0])
    setDraft({ uuids })
  }
  const save = async (event) => {
    event.preventDefault()
    const rows = []
    for (let i = 0; i < draft.uuids.length; i += PER_ROW) rows.push({ layout: PER_ROW, charts: draft.uuids.slice(i, i + PER_ROW) })
    try {
      await change('PATCH', `/dashboard/${id}/`, { title: draft.title, description: draft.description, rows })
      clearDraft('dashboard', id)
      navigate(`#/dashboard/${id}`)
    } catch (e) {
      setError(e.code === 'UNIQUE_VIOLATION' ? await takenTitle('dashboard', draft.title) : e.message)
    }
  }
  const cancel = () => {
    if (draft.changed && !confirm(t('Discard the changes to this dashboard?'))) return
    clearDraft('dashboard', id)
    navigate(`#/dashboard/${id}`)
  }
  const remove = async () => {
    if (!confirm(t('Delete the dashboard “{title}”? Its charts stay.', { title: dashboard.title }))) return
    try {
      await change('DELETE', `/dashboard/${id}/`)
      clearDraft('dashboard', id)
      navigate('#/')
    } catch (e) {
      setError(e.message)
    }
  }
  const present = new Set(draft.uuids)
  return html`<h1>${t('Edit dashboard')}</h1>
    ${draft.changed && html`<p class="notice" role="status">${t('Unsaved changes: save the dashboard to keep them.')}</p>`}
    <form class="stack" onSubmit=${save}>
      <label>${t('Title')} <input name="title" required maxlength="255" value=${draft.title} onInput=${(e) => setDraft({ title: e.target.value })} /></label>
      <label>${t('Description')} <input name="description" maxlength="1000" value=${draft.description} onInput=${(e) => setDraft({ description: e.target.value })} /></label>
      <h2>${t('Charts, in order')}</h2>
      <ol class="cards">
        ${charts.map(
          (c, i) => html`<li key=${c.uuid} class="chart-item"><span>${c.title}</span>
            <span class="actions">
              <button type="button" class="secondary" aria-label=${t('Move {title} up', { title: c.title })} onClick=${() => move(i, i - 1)} disabled=${i === 0}>${t('Up')}</button>
              <button type="button" class="secondary" aria-label=${t('Move {title} down', { title: c.title })} onClick=${() => move(i, i + 1)} disabled=${i === charts.length - 1}>${t('Down')}</button>
              ${c.id && html`<a class="button secondary" href=${`#/chart/${c.id}/edit/${id}`} aria-label=${t('Edit {title}', { title: c.title })}>${t('Edit')}</a>`}
              <button type="button" class="secondary" aria-label=${t('Remove {title}', { title: c.title })} onClick=${() => setDraft({ uuids: draft.uuids.filter((u) => u !== c.uuid) })}>${t('Remove')}</button>
            </span></li>`,
        )}
      </ol>
      <div class="inline">
        <label>${t('Add a saved chart')}
          <select value=${adding} onChange=${(e) => setAdding(e.target.value)}>
            <option value="">${t('Choose a chart')}</option>
            ${allCharts.filter((c) => !present.has(c.uuid)).map((c) => html`<option key=${c.uuid} value=${c.uuid}>${c.title}</option>`)}
          </select>
        </label>
        <button type="button" class="secondary" disabled=${!adding} onClick=${() => {
          setDraft({ uuids: [...draft.uuids, adding] })
          setAdding('')
        }}>${t('Add chart')}</button>
        <a class="button secondary" href=${`#/chart/new/${id}`}>${t('Build a new chart')}</a>
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <div class="inline">
        <button type="submit">${t('Save dashboard')}</button>
        <button type="button" class="secondary" onClick=${cancel}>${t('Cancel')}</button>
        <button type="button" class="danger" onClick=${remove}>${t('Delete dashboard')}</button>
      </div>
    </form>`
}

/**
 * Puts a chart on a dashboard's draft (the editor shows it, unsaved, when it opens), in the place of
 * `replacing` when that is there; the dashboard is read only when no draft was kept.
 */
export async function addToDraft(dashboardId, uuid, replacing) {
  const id = String(dashboardId)
  const draft = loadDraft('dashboard', id) ?? draftOf(await change('GET', `/dashboard/${id}/`))
  const uuids =
    replacing && draft.uuids.includes(replacing)
      ? draft.uuids.map((u) => (u === replacing ? uuid : u))
      : draft.uuids.includes(uuid)
        ? draft.uuids
        : [...draft.uuids, uuid]
  saveDraft('dashboard', id, { ...draft, uuids, changed: true })
}
