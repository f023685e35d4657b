// Uploads: what a file must hold and a template of it → a file and its document type → the document →
// transform as a background job with a live progress bar → its report → the codes no mapping knows,
// mapped here → applied as another job, the report kept. A document's page (`#/upload/<id>`, opened
// from the lists below) shows its report, its codes to map and a Revert button.
import { useEffect, useState } from 'preact/hooks'
import { change, list, query } from '../api.js'
import { fileNameOf, formatCount } from '../format.js'
import { html } from '../html.js'
import { t, tn } from '../i18n.js'
import { LocationSearch } from './location-search.js'
import { mergedReport, Report } from './upload-report.js'
import { STEP_NAMES, stateWord, UploadLists } from './upload-lists.js'
import { ImportSummary, useDataValueSetImport } from './dhis2-import.js'

export { STEP_NAMES }

/** The fixed columns of each kind of file (ingestion §2.1); every other column is an indicator. */
const FILE_KINDS = {
  campaign: { label: () => t('Campaign file'), template: () => t('Download a campaign file template'), columns: ['geocode', 'campaign'] },
  date: { label: () => t('Date file'), template: () => t('Download a date file template'), columns: ['geocode', 'data_date', 'unique_key'] },
}

/** A CSV cell: a leading ' on what a spreadsheet would run as a formula, quoted when it must be. */
export function csvCell(value) {
  const text = String(value ?? '')
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/**
 * The CSV of an `upload_template` answer: its header (codes the catalog maps), then a row per
 * location with the indicator cells empty, to be filled in.
 */
export function templateCsv(template) {
  const empty = template.header.length
  const line = (cells) => [...cells, ...Array(empty - cells.length).fill('')].map(csvCell).join(',')
  return `${[template.header, ...template.rows].map(line).join('\r\n')}\r\n`
}

/**
 * The template's file name: its kind and what every row carries (the campaign's name, or the day), so
 * templates of two campaigns downloaded side by side are told apart, in the reader's language.
 * Characters a file system refuses become '-'.
 */
export function templateFileName(template) {
  const subject = template.campaign?.name ?? template.data_date
  const kind = template.file_type === 'date' ? t('date-template') : t('campaign-template')
  return `${kind}${subject ? ` ${subject}` : ''}.csv`.replace(/[/\\:*?"<>|]/g, '-')
}

/** What a pipeline stage is called here (lib/ingest reports these), the API's name otherwise. */
function stageWord(stage) {
  const words = {
    'rows parsed': t('rows parsed'),
    'cells staged': t('cells staged'),
    'submissions written': t('submissions written'),
    'cells written': t('cells written'),
    'datapoints written': t('datapoints written'),
    'campaigns recomputed': t('campaigns recomputed'),
    'values reverted': t('values reverted'),
  }
  return words[stage] ?? stage
}

/** The stage a job is at, and its place among the step's stages when the job says it: "step 5 of 6: datapoints written". */
function stageWords(progress) {
  const stage = stageWord(progress.stage)
  return progress.step ? t('step {step} of {steps}: {stage}', { step: progress.step, steps: progress.steps, stage }) : stage
}

/** What a code of a file stands for, in words. */
function kindWord(contentType) {
  const words = { location: t('location'), indicator: t('indicator'), campaign: t('campaign') }
  return words[contentType] ?? contentType
}
const POLL_MS = 250
const FINISHED = new Set(['completed', 'failed', 'cancelled'])

/** Runs a pipeline step as a job (`Prefer: respond-async`) and reports it until it finishes; the finished job. */
async function runJob(step, documentId, onUpdate) {
  const response = await fetch(`/api/v1/${step}/?document_id=${documentId}`, { credentials: 'same-origin', headers: { prefer: 'respond-async' } })
  let job = await response.json()
  if (response.status !== 202) throw new Error(job.message ?? `${step}: ${response.status}`)
  onUpdate(job)
  while (!FINISHED.has(job.state)) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    job = await change('GET', `/job/${job.id}/`)
    onUpdate(job)
  }
  if (job.state !== 'completed') throw new Error(job.error?.message ?? t('The job ended: {state}', { state: stateWord(job.state) }))
  return job
}

/**
 * How far a job is, in percent, 100 once done: through its stages when it says which of them it is at
 * (each stage an equal share), else through its last reported stage.
 */
export function percentOf(job) {
  if (!job) return 0
  if (job.state === 'completed') return 100
  const { done = 0, total = 0, step, steps } = job.progress ?? {}
  const stage = total > 0 ? done / total : 0
  const share = step ? (step - 1 + stage) / steps : stage
  return Math.min(99, Math.floor(100 * share))
}

/** The report of the latest transform of a document, from its jobs (a refresh's report leaves its parts out). */
async function transformReport(documentId) {
  const jobs = await list(`/job/${query({ kind: 'transform_upload', state: 'completed', order_by: '-id', limit: 50, fields: 'id,params,result' })}`).catch(
    () => [],
  )
  return jobs.find((j) => j.params?.document_id === documentId)?.result?.ingest_stats ?? null
}

/** A document's report: a job's own (`jobId`), else the document's latest, completed by its transform's. */
async function openReport(documentId, jobId) {
  const doc = await change('GET', `/document/${documentId}/`)
  let latest = doc.ingest_stats ?? null
  let reverted = null
  // The job whose report is shown, when known: the values it changed are named from its history.
  let reportJob = null
  if (jobId) {
    const job = await change('GET', `/job/${jobId}/`)
    if (job.kind === 'revert_document') reverted = job.result
    else if (job.result?.ingest_stats) {
      latest = job.result.ingest_stats
      reportJob = job.id
    }
  }
  const report = latest?.action === 'refresh_master' ? mergedReport(await transformReport(documentId), latest) : latest
  return { doc, report, reverted, reportJob }
}

/** Downloads the template of a kind of file for the rows and campaign chosen (`upload_template`). */
async function downloadTemplate(kind, locationId, campaignId) {
  const [template] = await list(
    `/upload_template/${query({ file_type: kind, location_id: locationId, campaign_id: kind === 'campaign' ? campaignId : undefined })}`,
  )
  const link = document.createElement('a')
  link.href = URL.createObjectURL(new Blob([templateCsv(template)], { type: 'text/csv;charset=utf-8' }))
  link.download = templateFileName(template)
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000)
  return template
}

function TemplateForm({ kind, catalog }) {
  const [locationId, setLocationId] = useState(null)
  const campaigns = [...catalog.campaigns].reverse()
  const [campaignId, setCampaignId] = useState(campaigns[0]?.id ?? '')
  const [made, setMade] = useState(null)
  const [error, setError] = useState('')
  const download = async () => {
    setError('')
    try {
      setMade(await downloadTemplate(kind, locationId, campaignId))
    } catch (e) {
      setError(e.message)
    }
  }
  return html`<div class="stack template">
    <${LocationSearch} catalog=${catalog} label=${t('Template rows: the lowest locations under')} locationId=${locationId} allowNone=${true} noneLabel=${t('All your locations')} onChange=${setLocationId} />
    ${
      kind === 'campaign' &&
      html`<label>${t('Template campaign')}
        <select value=${campaignId} onChange=${(e) => setCampaignId(Number(e.target.value))}>
          ${campaigns.map((c) => html`<option key=${c.id} value=${c.id}>${c.name}</option>`)}
        </select></label>`
    }
    <button type="button" class="secondary" onClick=${download}>${FILE_KINDS[kind].template()}</button>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      made &&
      html`<p class="template-made" aria-live="polite">
        ${tn(made.rows.length, 'The template has {n} row', 'The template has {n} rows', { n: formatCount(made.rows.length) })}
        ${tn(made.indicators.length, ' and {n} indicator column.', ' and {n} indicator columns.', { n: formatCount(made.indicators.length) })}
        ${made.calculated.length > 0 && ` ${t('Calculated by the system, so left out: {names}.', { names: made.calculated.map((i) => i.short_name).join(', ') })}`}
      </p>`
    }
  </div>`
}

export function Upload({ catalog, user, documentId, jobId }) {
  // Mappings are metadata: superusers and metadata editors make them.
  const mayMap = Boolean(user.is_superuser || user.metadata_editor)
  const [phase, setPhase] = useState(documentId ? 'loading' : 'choose')
  const [job, setJob] = useState(null)
  const [documentRow, setDocumentRow] = useState(null)
  const [report, setReport] = useState(null)
  const [reportJob, setReportJob] = useState(null)
  const [reverted, setReverted] = useState(null)
  const [unmapped, setUnmapped] = useState([])
  const [error, setError] = useState('')
  const [listsShown, setListsShown] = useState(0)
  const [kind, setKind] = useState('campaign')
  const [dhis2, importedSet] = useDataValueSetImport(() => setListsShown((n) => n + 1))
  const failed = (e) => (setError(e.message), setPhase('choose'))

  const showDocument = async (doc) => setUnmapped(await list(`/source_object_map/?document_id=${doc.id}&is_mapped=0&limit=0`))
  useEffect(() => {
    if (!documentId) return
    setError('')
    setJob(null)
    openReport(Number(documentId), jobId).then(async ({ doc, report, reverted, reportJob }) => {
      setDocumentRow(doc)
      setReport(report)
      setReportJob(reportJob)
      setReverted(reverted)
      await showDocument(doc)
      setPhase('summary')
    }, failed)
  }, [documentId, jobId])

  const process = async (step, doc) => {
    setPhase('running')
    const ran = await runJob(step, doc.id, setJob)
    setReport((before) => mergedReport(before, ran.result.ingest_stats))
    setReportJob(ran.id)
    setReverted(null)
    await showDocument(doc)
    setPhase('summary')
    setListsShown((n) => n + 1)
  }
  const upload = async (event) => {
    event.preventDefault()
    setError('')
    const form = new FormData(event.target)
    const file = /** @type {File} */ (form.get('docfile'))
    form.set('doc_title', file.name)
    try {
      // A DHIS2 data value set goes as DHIS2 sends it; its document's report then opens as any upload's.
      if (await importedSet(file)) return
      const doc = await change('POST', '/document/', form)
      setDocumentRow(doc)
      setReport(null)
      await process('transform_upload', doc)
    } catch (e) {
      failed(e)
    }
  }
  const applyMappings = async (event) => {
    event.preventDefault()
    setError('')
    const form = new FormData(event.target)
    try {
      for (const code of unmapped) {
        const master = form.get(`map-${code.id}`)
        if (master) await change('PATCH', `/source_object_map/${code.id}/`, { master_object_id: Number(master) })
      }
      await process('refresh_master', documentRow)
    } catch (e) {
      setError(e.message)
    }
  }
  const revert = async () => {
    if (!confirm(revertQuestion(report, documentRow))) return
    setError('')
    try {
      setPhase('running')
      setReverted((await runJob('revert_document', documentRow.id, setJob)).result)
      setPhase('summary')
      setListsShown((n) => n + 1)
    } catch (e) {
      setError(e.message)
      setPhase('summary')
    }
  }
  return html`<h1>${t('Upload')}</h1>
    <${UploadForm} kind=${kind} onKind=${setKind} catalog=${catalog} onUpload=${upload} running=${phase === 'running'} />
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${dhis2 && html`<${ImportSummary} summary=${dhis2} />`}
    ${job && html`<${Progress} job=${job} doc=${documentRow} report=${report} unmapped=${unmapped} phase=${phase} />`}
    ${
      phase === 'summary' &&
      documentRow &&
      html`<${DocumentReport} doc=${documentRow} report=${report} reportJob=${reportJob} reverted=${reverted} unmapped=${unmapped} catalog=${catalog} mayMap=${mayMap} onMap=${applyMappings} onRevert=${revert}
        othersDocument=${Boolean(user.restricted && documentRow.created_by_id !== user.id)} />`
    }
    <${UploadLists} refresh=${listsShown} catalog=${catalog} />`
}

/** A document's conflict policies, the app's choice first: people see what disagrees before it is saved. */
const CONFLICT_CHOICES = {
  reject: () => t('Save neither and list them'),
  last: () => t('Keep the later line'),
  first: () => t('Keep the earlier line'),
}

function progressLabel(job, doc) {
  const file = doc ? fileNameOf(doc.doc_title) : ''
  if (job.kind === 'refresh_master') return t('Applying mappings to {file}', { file })
  if (job.kind === 'revert_document') return t('Reverting {file}', { file })
  return t('Reading {file}', { file })
}

/** What the progress line says: the step at work, then, once done, what was saved and what waits. */
function progressWords(job, report, unmapped, phase) {
  if (phase !== 'summary' || !report || job.kind === 'revert_document')
    return job.state === 'completed' ? t('done') : `${job.progress ? stageWords(job.progress) : stateWord(job.state)}…`
  const d = report.datapoints ?? {}
  // A value the file repeats is held by it as much as one it writes (counted unchanged, D26).
  const saved = (d.inserted ?? 0) + (d.updated ?? 0) + (d.unchanged ?? 0)
  const done = tn(saved, 'Done: {n} value saved.', 'Done: {n} values saved.', { n: formatCount(saved) })
  // What was not saved is said beside what was: a reader of this line alone must not think all went in.
  const refused = report.rejected_cells?.count ?? 0
  const skipped = (report.skipped_rows?.count ?? 0) + (report.submissions?.rejected_rows?.count ?? 0)
  const count = (n) => ({ n: formatCount(n) })
  return [
    done,
    refused > 0 && tn(refused, '{n} cell refused (listed below).', '{n} cells refused (listed below).', count(refused)),
    skipped > 0 && tn(skipped, '{n} line skipped (listed below).', '{n} lines skipped (listed below).', count(skipped)),
    unmapped.length > 0 && tn(unmapped.length, '{n} code waits for mapping below.', '{n} codes wait for mapping below.', count(unmapped.length)),
  ]
    .filter(Boolean)
    .join(' ')
}

/**
 * A document's page: its report (`reportJob`: the job that wrote it, when known; a document's latest
 * report names none), what a revert did, its codes to map and the Revert button.
 */
function DocumentReport({ doc, report, reportJob, reverted, unmapped, catalog, mayMap, onMap, onRevert, othersDocument }) {
  // A user limited to part of the country reads another's document without its report (it may name
  // places outside her part) and may not process or revert it (the API refuses both): said, not offered.
  if (othersDocument)
    return html`<section aria-labelledby="report-heading" class="document-report">
      <h2 id="report-heading">${t('Report of {file}', { file: fileNameOf(doc.doc_title) })}</h2>
      <p class="hint">${t('Another user uploaded this file: its report, mappings and revert are theirs, and those of users who see the whole country.')}</p>
    </section>`
  return html`<section aria-labelledby="report-heading" class="document-report">
    <h2 id="report-heading">${t('Report of {file}', { file: fileNameOf(doc.doc_title) })}</h2>
    ${report ? html`<${Report} report=${report} catalog=${catalog} policy=${doc.conflict} documentId=${doc.id} jobId=${reportJob} />` : html`<p>${t('This document has not been read yet.')}</p>`}
    ${
      reverted &&
      html`<p class="reverted" role="status">${t(
        'Reverted: {restored} values put back, {deleted} removed, {conflicts} changed since by another source and kept.',
        {
          restored: formatCount(reverted.restored?.count ?? 0),
          deleted: formatCount(reverted.deleted?.count ?? 0),
          conflicts: formatCount(reverted.conflicts?.count ?? 0),
        },
      )}</p>`
    }
    ${unmapped.length > 0 && html`<${Mapping} codes=${unmapped} catalog=${catalog} mayMap=${mayMap} onSubmit=${onMap} />`}
    ${doc.docfile !== null && html`<p><button type="button" class="danger" onClick=${onRevert}>${t('Revert')}</button></p>`}
  </section>`
}

/** What an indicator or a campaign code may mean (a location is found by typing: a country has thousands). */
const CHOICES = {
  indicator: (catalog) => catalog.indicators.map((i) => [i.id, i.short_name]),
  campaign: (catalog) => catalog.campaigns.map((c) => [c.id, c.name]),
}

/** One code's meaning: a location found by typing, an indicator or a campaign from a list. */
function CodeChoice({ code, catalog, label }) {
  const [locationId, setLocationId] = useState(null)
  if (code.content_type === 'location') {
    return html`<div><${LocationSearch} catalog=${catalog} label=${label} locationId=${locationId} allowNone=${true} noneLabel=${t('Leave unmapped')} onChange=${setLocationId} />
      <input type="hidden" name=${`map-${code.id}`} value=${locationId ?? ''} /></div>`
  }
  return html`<label>${label}
    <select name=${`map-${code.id}`}>
      <option value="">${t('Leave unmapped')}</option>
      ${CHOICES[code.content_type](catalog).map(([id, name]) => html`<option key=${id} value=${id}>${name}</option>`)}
    </select>
  </label>`
}

function Mapping({ codes, catalog, mayMap, onSubmit }) {
  const label = (code) => t('{kind} “{code}”', { kind: kindWord(code.content_type), code: code.source_object_code })
  return html`<section aria-labelledby="mapping-heading" class="mapping">
    <h3 id="mapping-heading">${t('Codes to map')}</h3>
    ${
      mayMap
        ? html`<p>${t('These codes of the file match nothing yet. Choose what each one means, then apply.')}</p>
          <form class="stack" onSubmit=${onSubmit}>
            ${codes.map((code) => html`<${CodeChoice} key=${code.id} code=${code} catalog=${catalog} label=${label(code)} />`)}
            <button type="submit">${t('Apply mappings')}</button>
          </form>`
        : html`<p>${t('These codes of the file match nothing yet: someone who edits metadata maps them. Their values are saved when the mappings are applied.')}</p>
          <ul>${codes.map((code) => html`<li key=${code.id}>${label(code)}</li>`)}</ul>
          <form onSubmit=${onSubmit}><button type="submit">${t('Apply mappings made since')}</button></form>`
    }
  </section>`
}

/** What a file holds (with its template), and the file chosen with its type and conflict rule. */
function UploadForm({ kind, onKind, catalog, onUpload, running }) {
  const { columns } = FILE_KINDS[kind]
  const codesSaid =
    kind === 'campaign'
      ? t('A geocode is a location’s code; campaign is the campaign’s name.')
      : t('A geocode is a location’s code; data_date is the day of the values (2016-03-15), unique_key names each line.')
  return html`<section aria-labelledby="format-heading" class="file-format">
      <h2 id="format-heading">${t('What the file holds')}</h2>
      <p>${t('A CSV or XLSX file, its first line the column names:')} <strong>${columns.join(', ')}</strong>${t(', then one column per indicator.')} ${codesSaid} ${t('A column the system does not know yet is offered for mapping after the upload.')} ${t('The template’s columns and codes are ones the system knows: filled in, it is saved with nothing to map.')} ${t('Its location_name column names each place for you; an upload ignores it.')}</p>
      <${TemplateForm} key=${kind} kind=${kind} catalog=${catalog} />
    </section>
    <form class="stack" onSubmit=${onUpload}>
      <label>${t('File (CSV or XLSX)')} <input type="file" name="docfile" accept=".csv,.xlsx,.json,.xml,.adx" required /></label>
      <p class="hint">${t('A DHIS2 data value set (JSON, or CSV in DHIS2’s columns) is imported as DHIS2 sends it: its organisation units are location codes, its data elements codes mapped to indicators.')}</p>
      <label>${t('Document type')}
        <select name="file_type" value=${kind} onChange=${(e) => onKind(e.target.value)}>
          ${Object.entries(FILE_KINDS).map(([value, k]) => html`<option key=${value} value=${value}>${k.label()}</option>`)}
        </select>
      </label>
      <label>${t('When the file gives one cell two different values')}
        <select name="conflict">
          ${Object.entries(CONFLICT_CHOICES).map(([value, label]) => html`<option key=${value} value=${value}>${label()}</option>`)}
        </select>
      </label>
      <label>${t('Text encoding of a CSV file')}
        <select name="encoding">
          <option value="utf-8">${t('UTF-8 (most files)')}</option>
          <option value="windows-1252">${t('Windows-1252 (a CSV saved by an older Excel)')}</option>
        </select>
      </label>
      <button type="submit" disabled=${running}>${t('Upload file')}</button>
    </form>`
}

/** How far the upload's job has come, in a bar and in words. */
function Progress({ job, doc, report, unmapped, phase }) {
  return html`<section aria-label=${t('Progress')} class="progress">
      <label>${progressLabel(job, doc)}
        <progress max="100" value=${percentOf(job)}>${percentOf(job)} %</progress></label>
      <p aria-live="polite"><span class="percent">${percentOf(job)} %</span> ${progressWords(job, report, unmapped, phase)}</p>
    </section>`
}

/** What a revert asks first: the file and how many of its values go back. */
function revertQuestion(report, doc) {
  const d = report?.datapoints ?? {}
  const values = (d.inserted ?? 0) + (d.updated ?? 0) + (d.unchanged ?? 0)
  return t('Revert “{file}”? Its {n} values go back to what they were before it, and its campaigns are recomputed.', {
    file: fileNameOf(doc.doc_title),
    n: formatCount(values),
  })
}
