// What a dashboard's page and a shared link's page both draw: the drill-down's path and the rows of
// chart cards.
import { html } from '../html.js'
import { t } from '../i18n.js'
import { ChartCard } from './chart-card.js'

/**
 * The drill-down's path, once a location is chosen: each chart's own locations, then the view's
 * location and its ancestors. With
 * `top` (the one location a shared link's reader sees) it starts there instead: each chart's own
 * locations lie outside what the link shows.
 */
export function DrillDown({ catalog, view, onChange, top = null }) {
  const path = view.locationId == null ? (top ? [top] : []) : catalog.pathTo(view.locationId)
  // Nothing drilled into: the location field above already says "each chart's locations".
  if (!path.length) return null
  const current = view.locationId ?? top?.id
  return html`<nav aria-label=${t('Drill-down')} class="breadcrumb">
    ${!top && html`<button class="link" aria-current=${view.locationId == null ? 'true' : undefined} onClick=${() => onChange({ location: null })}>${t("Each chart's locations")}</button>`}
    ${path.map(
      (l, i) =>
        html`<span key=${l.id}>${top && i === 0 ? '' : ' › '}<button class="link" aria-current=${l.id === current ? 'true' : undefined} onClick=${() => onChange({ location: l.id })}>${l.name}</button></span>`,
    )}
  </nav>`
}

/** A dashboard's rows of chart cards under the view; `cardProps`: what every card takes besides (its data, reader, exports). */
export function ChartRows({ dashboard, view, catalog, onChange, cardProps = {} }) {
  return (dashboard.rows ?? []).map(
    (row, r) => html`<div class="chart-row" key=${r}>
      ${(row?.charts ?? [])
        .filter((c) => typeof c === 'object' && c)
        .map(
          (chart) =>
            html`<${ChartCard} key=${chart.uuid ?? chart.id} chart=${chart} view=${view} catalog=${catalog} onDrill=${(location) => onChange({ location })} ...${cardProps} />`,
        )}
    </div>`,
  )
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

/** A campaign picker's choices: grouped by type, latest first in each (the dashboard's and a shared link's alike). */
export const CampaignChoices = ({ campaigns, pickedId, catalog }) =>
  byCampaignType(campaigns, pickedId, catalog).map(
    ([type, grouped]) => html`<optgroup key=${type} label=${type}>${grouped.map((c) => html`<option key=${c.id} value=${c.id}>${c.name}</option>`)}</optgroup>`,
  )
