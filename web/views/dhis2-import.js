// A DHIS2 data value set chosen on the upload page (a .json file, a CSV in DHIS2's columns, or ADX XML) is sent
// as DHIS2 sends it, to `/api/dataValueSets`: the server reads it through the same pipeline as an
// upload, and answers DHIS2's import summary, shown here above the document's own report.
import { useState } from 'preact/hooks'
import { ApiFailure } from '../api.js'
import { refusalText } from '../api-messages.js'
import { html } from '../html.js'
import { t } from '../i18n.js'

/** Whether `file` is a DHIS2 data value set: JSON, ADX (.xml or .adx), or a CSV whose first column is DHIS2's dataelement. */
export async function isDataValueSet(file) {
  if (/\.(json|xml|adx)$/i.test(file.name)) return true
  if (!/\.csv$/i.test(file.name)) return false
  const start = (await file.slice(0, 200).text()).replace(/^\uFEFF/, '').toLowerCase()
  return /^"?dataelement"?,/.test(start)
}

/** The media type a data value set file is sent as, by its name. */
const mediaTypeOf = (file) => (/\.json$/i.test(file.name) ? 'application/json' : /\.(xml|adx)$/i.test(file.name) ? 'application/adx+xml' : 'application/csv')

/** The import summary of `file`, sent as DHIS2 sends it; an ApiFailure when it is refused. */
export async function importDataValueSet(file) {
  const response = await fetch('/api/dataValueSets', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': mediaTypeOf(file) },
    body: await file.text(),
  })
  const body = await response.json().catch(() => ({}))
  if (!response.ok)
    throw new ApiFailure(refusalText(body, t('The data value set was not imported: {status}', { status: response.status })), response.status, body.code)
  return body.response
}

/**
 * [the last import's summary, `imported(file)`]: true when `file` was a data value set, imported, and
 * its document's page opened (`onImported` first); false for any other file, left to the upload.
 */
export function useDataValueSetImport(onImported) {
  const [summary, setSummary] = useState(null)
  const imported = async (file) => {
    setSummary(null)
    if (!(await isDataValueSet(file))) return false
    const answer = await importDataValueSet(file)
    setSummary(answer)
    onImported()
    if (answer.document_id) location.hash = `#/upload/${answer.document_id}`
    return true
  }
  return [summary, imported]
}

/** The summary in words: its counts, then each reason a value was set aside, with the values' places in the file. */
export function ImportSummary({ summary }) {
  const { imported, updated, ignored } = summary.importCount
  return html`<section class="dhis2-summary" aria-labelledby="dhis2-heading">
    <h2 id="dhis2-heading">${t('DHIS2 data value set')}</h2>
    <p role="status">${t('{imported} values imported, {updated} updated, {ignored} ignored.', { imported, updated, ignored })}</p>
    ${
      summary.conflicts.length > 0 &&
      html`<ul class="dhis2-conflicts">${summary.conflicts.map(
        (c) =>
          html`<li key=${c.object + c.value}>${t('Values {indexes}: {reason}', { indexes: c.indexes.map((i) => i + 1).join(', '), reason: c.value })}</li>`,
      )}</ul>`
    }
  </section>`
}
