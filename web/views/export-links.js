// "Export": the file links of a dashboard or a chart under the view shown (the server draws them:
// GET /export_file/), and a chart's CSV with names.
import { query } from '../api.js'
import { csvFileName, downloadCsv } from '../csv-download.js'
import { html } from '../html.js'
import { language, t } from '../i18n.js'
import { viewParams } from '../dashboard.js'

const FILES = [
  ['pdf', 'PDF'],
  ['png', 'PNG'],
  ['svg', 'SVG'],
]

/**
 * `target`: `{dashboard_id}` or `{chart_id}`; `view`: the campaign, location and dates shown; `csv`: a chart's
 * CSV read, if it has one (written for people: web/csv-download.js, with `catalog`); `base`: where exports are
 * asked (a shared link's own route).
 */
export function ExportLinks({ target, view, label, csv = undefined, catalog = undefined, base = '/api/v1/export_file/' }) {
  const href = (type) => `${base}${query({ ...target, type, ...viewParams(view), lang: language() === 'en' ? undefined : language() })}`
  return html`<details class="export">
    <summary aria-label=${t('Export {label}', { label })}>${t('Export')}</summary>
    <ul>
      ${FILES.map(([type, name]) => html`<li key=${type}><a href=${href(type)} download>${name}</a></li>`)}
      ${csv && catalog && html`<li><a href=${`/api/v1${csv}`} download=${csvFileName(csv, catalog)} onClick=${(e) => downloadCsv(e, csv, catalog)}>${t('CSV with names')}</a></li>`}
    </ul>
  </details>`
}
