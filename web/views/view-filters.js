// A dashboard view's date range fields (the view itself: web/dashboard.js).
import { html } from '../html.js'
import { t } from '../i18n.js'

/** From and To: a range that narrows every chart that does not pin its own. */
export function DateRange({ view, onChange }) {
  return html`<fieldset class="date-range">
    <legend class="visually-hidden">${t('Dates')}</legend>
    <label>${t('From')} <input type="date" value=${view.startDate ?? ''} onChange=${(e) => onChange({ start_date: e.target.value })} /></label>
    <label>${t('To')} <input type="date" value=${view.endDate ?? ''} onChange=${(e) => onChange({ end_date: e.target.value })} /></label>
  </fieldset>`
}
