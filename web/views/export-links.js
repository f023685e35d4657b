// "Export": the file links of a dashboard or a chart under the view shown (the server draws them:
// GET /export_file/), and a chart's CSV with names.
import { query } from '../api.js'
import { csvFileName, downloadCsv } from '../csv-download.js'
import { html } from '../html.js'
import { language, t } from '../i18n.js'
import { viewParams } from '../dashboard.js'

/** Each file offered: its type, its name, and what else it asks (a PDF's paper: A4 or US Letter). */
const FILES = [
  ['pdf', 'PDF, A4', {}],
  ['pdf', 'PDF, Letter', { page: 'letter' }],
  ['png', 'PNG', {}],
  ['svg', 'SVG', {}],
]

/**
 * `target`: `{dashboard_id}` or `{chart_id}`; `view`: the campaign, location and dates shown; `csv`: a chart's
 * CSV read, if it has one (written for people: web/csv-download.js, with `catalog`); `base`: where exports are
 * asked (a shared link's own route).
 */
export function ExportLinks({ target, view, label, csv = undefined, catalog = undefined, base = '/api/v1/export_file/' }) {
  const href = (type, asked) => `${base}${query({ ...target, type, ...asked, ...viewParams(view), lang: language() === 'en' ? undefined : language() })}`
  return html`<details class="export">
    <summary aria-label=${t('Export {label}', { label })}>${t('Export')}</summary>
    <ul>
      ${FILES.map(([type, name, asked]) => html`<li key=${name}><a href=${href(type, asked)} download>${name}</a></li>`)}
      ${csv && catalog && html`<li><a href=${`/api/v1${csv}`} download=${csvFileName(csv, catalog)} onClick=${(e) => downloadCsv(e, csv, catalog)}>${t('CSV with names')}</a></li>`}
    </ul>
  </details>`
}
