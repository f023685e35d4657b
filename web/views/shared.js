// A shared link's dashboard (`#/shared/<token>`), for people without an account: read-only, drawn from
// one answer of `GET /shared/<token>/` (the dashboard, the names it shows and every read its charts
// make), with its campaign and drill-down in the address and its files through the link's own export.
import { useEffect, useMemo } from 'preact/hooks'
import { api, catalogOf, query } from '../api.js'
import { html } from '../html.js'
import { useRead } from './use-read.js'
import { t } from '../i18n.js'
import { routeHash } from '../route.js'
import { ExportLinks } from './export-links.js'
import { LanguagePicker } from './language-picker.js'
import { CampaignChoices, ChartRows, DrillDown } from './dashboard-parts.js'
import { DateRange } from './view-filters.js'
import { isDate, viewParams } from '../dashboard.js'
import { refusalText } from '../api-messages.js'

export function SharedDashboard({ token, params }) {
  const campaign = Number(params.campaign) || undefined
  const location = Number(params.location) || undefined
  const startDate = isDate(params.start_date) ? params.start_date : undefined
  const endDate = isDate(params.end_date) ? params.end_date : undefined
  const path = `/shared/${encodeURIComponent(token)}/${query({ campaign, location, start_date: startDate, end_date: endDate })}`
  const readLink = () =>
    api('GET', path).then((res) => {
      if (res.status === 200) return res.body
      throw new Error(refusalText(res.body, t('This link does not work ({status})', { status: res.status })))
    })
  const { value: answer, error: failed } = useRead(readLink, [token, campaign, location, startDate, endDate], null)
  const error = failed?.message ?? ''
  const catalog = useMemo(() => answer && catalogOf(answer.catalog), [answer])
  // An address without a view opens at the link's own (the view it was made from), as the server read it.
  const own = !campaign && !location && !startDate && !endDate ? (answer?.view ?? {}) : null
  const dashboardData = useMemo(() => Promise.resolve(answer?.data ?? null), [answer])
  useEffect(() => {
    document.title = `${answer?.dashboard.title ?? t('Shared dashboard')} · rhizome`
  }, [answer])
  if (error) return html`<main id="content"><h1>${t('Shared dashboard')}</h1><p class="error" role="alert">${error}</p></main>`
  if (!answer || !catalog) return html`<main id="content"><p>${t('Loading…')}</p></main>`
  const shown = own
    ? { campaign: own.campaign, location: own.location, startDate: own.start_date, endDate: own.end_date }
    : { campaign, location, startDate, endDate }
  const view = {
    campaignId: catalog.campaignName.has(shown.campaign) ? shown.campaign : null,
    locationId: catalog.locationName.has(shown.location) ? shown.location : null,
    startDate: shown.startDate ?? null,
    endDate: shown.endDate ?? null,
  }
  const go = (patch) => {
    window.location.hash = routeHash(`#/shared/${token}`, { ...viewParams(view), ...patch })
  }
  const read = async (path) => {
    if (answer.reads[path]) return answer.reads[path]
    throw new Error(t('Not part of this shared view'))
  }
  // A link for one location (its reader sees that subtree only): the drill-down starts there.
  const top = catalog.roots.length === 1 && catalog.roots[0].parent_location_id != null ? catalog.roots[0] : null
  const base = `/api/v1/shared/${encodeURIComponent(token)}/export_file/`
  const { dashboard } = answer
  return html`<main id="content" tabindex="-1">
    <div class="title-bar">
      <h1>${dashboard.title}</h1>
      <span class="actions"><${ExportLinks} target=${{}} view=${view} label=${t('this dashboard')} base=${base} /></span>
    </div>
    <p class="hint">${t('A read-only view shared with you.')} <a href="#/">${t('Sign in to do more')}</a> <${LanguagePicker} /></p>
    ${dashboard.description && html`<p>${dashboard.description}</p>`}
    <div class="controls">
      <label>${t('Campaign')}
        <select value=${view.campaignId ?? ''} onChange=${(e) => go({ campaign: e.target.value })}>
          <option value="">${t('As each chart says')}</option>
          <${CampaignChoices} campaigns=${catalog.campaigns} pickedId=${view.campaignId} catalog=${catalog} />
        </select>
      </label>
      <${DateRange} view=${view} onChange=${go} />
      <${DrillDown} catalog=${catalog} view=${view} onChange=${go} top=${top} />
    </div>
    <${ChartRows} dashboard=${dashboard} view=${view} catalog=${catalog} onChange=${go} cardProps=${{ dashboardData, read, exportBase: base }} />
  </main>`
}
