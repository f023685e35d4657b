// One dashboard: its rows of charts under a view (campaign picker, date range and drill-down kept in the
// address), its exports and share links; who may not change it duplicates it to edit.
import { FollowupCount } from './quality-followup.js'
import { useEffect, useMemo, useState } from 'preact/hooks'
import { api, change, freeTitle, list, mayChange } from '../api.js'
import { html } from '../html.js'
import { useRead } from './use-read.js'
import { t } from '../i18n.js'
import { routeHash } from '../route.js'
import { chartSpec, isTimeChart } from '../chart-data.js'
import { ExportLinks } from './export-links.js'
import { ShareLinks } from './share-links.js'
import { CampaignChoices, ChartRows, DrillDown } from './dashboard-parts.js'
import { DateRange } from './view-filters.js'
import { chartsOf, isDate, viewParams, viewQuery } from '../dashboard.js'
import { LocationSearch } from './location-search.js'

/**
 * A copy of a dashboard under a free title, owned by whoever copies it, with copies of its charts (each
 * under a free title): changing the copy never changes the original's charts. Returns its id.
 */
async function duplicate(dashboard) {
  const title = await freeTitle('dashboard', t('{title} (copy)', { title: dashboard.title }))
  const copies = new Map()
  for (const chart of chartsOf(dashboard)) {
    if (copies.has(chart.uuid)) continue
    const chartTitle = await freeTitle('custom_chart', t('{title} (copy)', { title: chart.title ?? chart.uuid }))
    const copy = await change('POST', '/custom_chart/', { uuid: crypto.randomUUID(), title: chartTitle, chart_json: chartSpec(chart.chart_json) })
    copies.set(chart.uuid, copy.uuid)
  }
  const rows = (dashboard.rows ?? []).map((row) => ({
    ...row,
    charts: (row?.charts ?? []).map((c) => (typeof c === 'object' && c ? (copies.get(c.uuid) ?? c.uuid) : c)),
  }))
  return (await change('POST', '/dashboard/', { title, description: dashboard.description ?? '', rows })).id
}

/** The address's campaign for "as each chart says" (`campaign=each`): an address naming none opens on the latest campaign with values. */
const EACH_CHART = 'each'

export function DashboardView({ id, catalog, user, params, navigate }) {
  const { value: dashboard, error: failed } = useRead(() => change('GET', `/dashboard/${id}/`), [id], null)
  const [duplicateError, setError] = useState('')
  const error = failed?.message ?? duplicateError
  // The view is the address: a campaign and a location this user may see.
  const locationId = catalog.locationName.has(Number(params.location)) ? Number(params.location) : null
  const offered = useCampaignsWithData(locationId ?? catalog.roots[0]?.id, dashboard && campaignIndicatorsOf(dashboard), catalog)
  const named = catalog.campaignName.has(Number(params.campaign)) ? Number(params.campaign) : null
  const eachChart = named === null && params.campaign === EACH_CHART
  // An address naming no campaign opens on the latest one with values where the reader looks: charts
  // saved with a campaign would otherwise open on it, often long past. Known once those are read.
  const choosing = named === null && !eachChart && offered === null
  const campaignId = named ?? (eachChart ? null : (offered?.at(-1)?.id ?? null))
  const startDate = isDate(params.start_date) ? params.start_date : null
  const endDate = isDate(params.end_date) ? params.end_date : null
  const view = useMemo(() => ({ campaignId, locationId, startDate, endDate }), [campaignId, locationId, startDate, endDate])
  // Every chart's rows in one request (null when it fails: each chart then reads its own).
  const dashboardData = useMemo(
    () =>
      choosing
        ? null
        : api('GET', `/dashboard/${id}/data/${viewQuery(view)}`).then(
            (res) => (res.status === 200 ? res.body : null),
            () => null,
          ),
    [id, view, choosing],
  )
  const inAddress = (patch = {}) =>
    routeHash(`#/dashboard/${id}`, { ...viewParams(view), campaign: view.campaignId ?? (eachChart ? EACH_CHART : undefined), ...patch })
  // The campaign chosen for the reader, written into the address in place (no history entry): a copied address shows it.
  useEffect(() => {
    if (named === null && !eachChart && campaignId !== null) window.history.replaceState(window.history.state, '', inAddress())
  }, [id, named, eachChart, campaignId])
  const go = (patch) => navigate(inAddress(patch))
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
        <select value=${campaignId ?? EACH_CHART} onChange=${(e) => go({ campaign: e.target.value })}>
          <option value=${EACH_CHART}>${t('As each chart says')}</option>
          <${CampaignChoices} campaigns=${offered ?? catalog.campaigns} pickedId=${campaignId} catalog=${catalog} />
        </select>
      </label>
      <${DateRange} view=${view} onChange=${go} />
      <${LocationSearch} catalog=${catalog} label=${t('Location')} locationId=${locationId} allowNone=${true} noneLabel=${t("Each chart's locations")} onChange=${(id) => go({ location: id })} />
      <${DrillDown} catalog=${catalog} view=${view} onChange=${go} />
    </div>
    <p class="hint">${t('Click a location in a chart or its numbers to drill down a level. The address keeps this view: copy it to share it.')}</p>
    <${FollowupCount} campaignId=${campaignId} locationId=${locationId} />
    ${(user.is_superuser || dashboard.owner_id === user.id) && html`<${ShareLinks} dashboardId=${id} view=${view} catalog=${catalog} />`}
    ${choosing ? html`<p>${t('Loading…')}</p>` : html`<${ChartRows} dashboard=${dashboard} view=${view} catalog=${catalog} onChange=${go} cardProps=${{ dashboardData }} />`}
    ${chartsOf(dashboard).length === 0 && html`<p>${t('No charts yet.')}${mayChange(user, dashboard) && html` <a href=${`#/dashboard/${id}/edit`}>${t('Add one')}</a>`}</p>`}`
}

/** The indicators a dashboard's campaign charts read, as `has_data_of` takes them ('' when none names one). */
function campaignIndicatorsOf(dashboard) {
  const ids = chartsOf(dashboard).flatMap((chart) => {
    const spec = chartSpec(chart.chart_json)
    return isTimeChart(spec) ? [] : (spec.indicator_ids ?? [])
  })
  return [...new Set(ids)].sort((a, b) => a - b).join(',')
}

/**
 * The campaigns with values of the dashboard's indicators at a location or below it
 * (`campaign/?has_data_for&has_data_of`), oldest first: what the campaign picker offers; null until the
 * dashboard and the answer are in (every campaign when it fails, or without a location to ask about).
 */
function useCampaignsWithData(locationId, indicators, catalog) {
  const withData = (found) => {
    const ids = new Set(found.map((c) => c.id))
    return catalog.campaigns.filter((c) => ids.has(c.id))
  }
  const of = indicators ? `&has_data_of=${indicators}` : ''
  const read = () => list(`/campaign/?has_data_for=${locationId}${of}&fields=id&limit=0`).then(withData, () => catalog.campaigns)
  const waiting = locationId == null || indicators == null
  const found = useRead(() => (waiting ? undefined : read()), [locationId, indicators, catalog], null).value
  return locationId == null ? catalog.campaigns : found
}
