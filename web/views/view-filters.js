// A dashboard's view as its address keeps it (`campaign`, `location`, `start_date`, `end_date`), as the
// API reads it (the dashboard's data, exports), and the date range's fields.
import { query } from '../api.js'
import { html } from '../html.js'
import { t } from '../i18n.js'

/** A day as the API and a date field write it. */
export const isDate = (value) => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)

/** A view's parameters, by the names of the address and the API. */
export const viewParams = (view) => ({
  campaign: view.campaignId ?? undefined,
  location: view.locationId ?? undefined,
  start_date: view.startDate ?? undefined,
  end_date: view.endDate ?? undefined,
})

/** A view as a query string. */
export const viewQuery = (view) => query(viewParams(view))

/** From and To: a range that narrows every chart that does not pin its own. */
export function DateRange({ view, onChange }) {
  return html`<fieldset class="date-range">
    <legend class="visually-hidden">${t('Dates')}</legend>
    <label>${t('From')} <input type="date" value=${view.startDate ?? ''} onChange=${(e) => onChange({ start_date: e.target.value })} /></label>
    <label>${t('To')} <input type="date" value=${view.endDate ?? ''} onChange=${(e) => onChange({ end_date: e.target.value })} /></label>
  </fieldset>`
}
