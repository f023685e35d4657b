// "Export": the file links of a dashboard or a chart under the view shown (the server draws them:
// GET /export_file/), and a chart's CSV with names. A file the server draws can take seconds (the
// first PDF after a start, most): its link says it is being prepared until the browser has the file.
import { useState } from 'preact/hooks'
import { query } from '../api.js'
import { csvFileName, downloadCsv } from '../csv-download.js'
import { html } from '../html.js'
import { language, t } from '../i18n.js'
import { viewParams } from '../dashboard.js'
import { refusalText } from '../api-messages.js'
import { useMenuDetails } from './menu-details.js'

/**
 * Each file offered: its type, its id, its name in the reader's language, and what else it asks (a
 * PDF's paper: A4 or US Letter).
 * @type {Array<[string, string, () => string, Record<string, string>]>}
 */
const FILES = [
  ['pdf', 'pdf-a4', () => t('PDF, A4'), {}],
  ['pdf', 'pdf-letter', () => t('PDF, Letter'), { page: 'letter' }],
  ['png', 'png', () => 'PNG', {}],
  ['svg', 'svg', () => 'SVG', {}],
]

/** The reader's time zone, for the file's "Made" time; none where the browser does not say. */
function readerTimeZone() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone
  return zone && zone !== 'UTC' ? zone : undefined
}

/** The file name a Content-Disposition gives (its UTF-8 `filename*` first), else `fallback`. */
function fileNameOf(disposition, fallback) {
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition ?? '')?.[1]
  if (encoded) return decodeURIComponent(encoded)
  return /filename="([^"]+)"/i.exec(disposition ?? '')?.[1] ?? fallback
}

/** Fetches a drawn file and hands it to the browser as a download under the server's name for it. */
async function downloadDrawn(href, fallbackName) {
  const response = await fetch(href, { credentials: 'same-origin' })
  if (!response.ok) {
    const body = await response.json().catch(() => null)
    throw new Error(refusalText(body, String(response.status)))
  }
  const url = URL.createObjectURL(await response.blob())
  const link = document.createElement('a')
  link.href = url
  link.download = fileNameOf(response.headers.get('content-disposition'), fallbackName)
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

/**
 * `target`: `{dashboard_id}` or `{chart_id}`; `view`: the campaign, location and dates shown; `csv`: a chart's
 * CSV read, if it has one (written for people: web/csv-download.js, with `catalog`); `base`: where exports are
 * asked (a shared link's own route).
 */
export function ExportLinks({ target, view, label, csv = undefined, catalog = undefined, base = '/api/v1/export_file/' }) {
  const href = (type, asked) =>
    `${base}${query({ ...target, type, ...asked, ...viewParams(view), lang: language() === 'en' ? undefined : language(), tz: readerTimeZone() })}`
  // The file being prepared (its name in FILES), and why the last one failed.
  const menu = useMenuDetails()
  const [preparing, setPreparing] = useState(null)
  const [error, setError] = useState('')
  const prepare = (type, name, asked) => async (event) => {
    event.preventDefault()
    if (preparing) return
    setPreparing(name)
    setError('')
    try {
      await downloadDrawn(href(type, asked), `${label}.${type}`)
    } catch (e) {
      setError(t('The file could not be made: {reason}', { reason: e.message }))
    } finally {
      setPreparing(null)
    }
  }
  return html`<details class="export" ref=${menu}>
    <summary aria-label=${t('Export {label}', { label })}>${t('Export')}</summary>
    <ul>
      ${FILES.map(
        ([type, id, name, asked]) =>
          html`<li key=${id}><a href=${href(type, asked)} download onClick=${prepare(type, id, asked)} aria-busy=${preparing === id ? 'true' : undefined} aria-disabled=${preparing && preparing !== id ? 'true' : undefined}>${preparing === id ? t('Preparing the {file}…', { file: type.toUpperCase() }) : name()}</a></li>`,
      )}
      ${csv && catalog && html`<li><a href=${`/api/v1${csv}`} download=${csvFileName(csv, catalog)} onClick=${(e) => downloadCsv(e, csv, catalog)}>${t('CSV with names')}</a></li>`}
      ${error && html`<li class="error" role="alert">${error}</li>`}
    </ul>
  </details>`
}
