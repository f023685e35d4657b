// Uploads: what a file must hold and a template → a file and its document type → the document →
// transform as a background job with a live progress bar → the ingest summary → the codes no mapping
// knows, mapped here → applied as another job. Below, the jobs this user may see, with names and
// local times.
import { useEffect, useState } from 'preact/hooks'
import { change, list, query } from '../api.js'
import { fileNameOf, formatCount, formatTime } from '../format.js'
import { html } from '../html.js'
import { t, tn } from '../i18n.js'
import { LocationSearch } from './location-search.js'

/** The fixed columns of each kind of file (ingestion §2.1); every other column is an indicator. */
const FILE_KINDS = {
  campaign: { label: () => t('Campaign file'), template: () => t('Download a campaign file template'), columns: ['geocode', 'campaign'], date: false },
  date: { label: () => t('Date file'), template: () => t('Download a date file template'), columns: ['geocode', 'data_date', 'unique_key'], date: true },
}

/** A CSV template of a kind of file: its fixed columns, the indicators of that kind, one example line. */
export function templateCsv(kind, catalog) {
  const { columns, date } = FILE_KINDS[kind]
  const indicators = catalog.indicators.filter((i) => (i.resource_name === 'date') === date).slice(0, 6)
  const quote = (cell) => (/[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell)
  const place = catalog.locations.find((l) => l.location_code)?.location_code ?? 'CODE'
  const example = date ? [place, '2016-03-15', `${place}-2016-03-15`] : [place, catalog.campaigns.at(-1)?.name ?? t('Campaign name')]
  return `${[...columns, ...indicators.map((i) => i.short_name)].map(quote).join(',')}\r\n${[...example, ...indicators.map(() => '')].map(quote).join(',')}\r\n`
}

/** What each pipeline step is called here. */
export const STEP_NAMES = {
  transform_upload: () => t('Read the file'),
  refresh_master: () => t('Apply mappings'),
  agg_refresh: () => t('Aggregate a campaign'),
  revert_document: () => t('Revert an upload'),
}

/** A document's conflict policies, the app's choice first: people see what disagrees before it is saved. */
const CONFLICT_CHOICES = {
  reject: () => t('Save neither and list them'),
  last: () => t('Keep the later line'),
  first: () => t('Keep the earlier line'),
}

const FINISHED = new Set(['completed', 'failed', 'cancelled'])

/** A job's state in words (the API's name otherwise). */
function stateWord(state) {
  const words = { created: t('waiting'), retry: t('waiting'), active: t('running'), completed: t('completed'), failed: t('failed'), cancelled: t('cancelled') }
  return words[state] ?? state
}

/** A pipeline stage in words (lib/ingest reports these), the API's name otherwise. */
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

/** Runs a pipeline step as a job (`Prefer: respond-async`) and reports it until it finishes. */
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
  return job.result
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

export function Upload({ catalog, user }) {
  // Mappings are metadata: superusers and metadata editors make them.
  const mayMap = Boolean(user.is_superuser || user.metadata_editor)
  const [phase, setPhase] = useState('choose')
  const [job, setJob] = useState(null)
  const [documentRow, setDocumentRow] = useState(null)
  const [stats, setStats] = useState(null)
  const [unmapped, setUnmapped] = useState([])
  const [error, setError] = useState('')
  const [jobsShown, setJobsShown] = useState(0)
  const [fileName, setFileName] = useState('')
  const [kind, setKind] = useState('campaign')

  const process = async (step, doc) => {
    setPhase('running')
    const result = await runJob(step, doc.id, setJob)
    setStats(result.ingest_stats)
    setUnmapped(await list(`/source_object_map/?document_id=${doc.id}&is_mapped=0&limit=0`))
    setPhase('summary')
    setJobsShown((n) => n + 1)
  }
  const upload = async (event) => {
    event.preventDefault()
    setError('')
    const form = new FormData(event.target)
    const file = /** @type {File} */ (form.get('docfile'))
    form.set('doc_title', file.name)
    setFileName(file.name)
    try {
      const doc = await change('POST', '/document/', form)
      setDocumentRow(doc)
      await process('transform_upload', doc)
    } catch (e) {
      setError(e.message)
      setPhase('choose')
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
  const percent = percentOf(job)
  const { columns } = FILE_KINDS[kind]
  const codesSaid =
    kind === 'campaign'
      ? t('A geocode is a location’s code; campaign is the campaign’s name.')
      : t('A geocode is a location’s code; data_date is the day of the values (2016-03-15), unique_key names each line.')
  return html`<h1>${t('Upload')}</h1>
    <section aria-labelledby="format-heading" class="file-format">
      <h2 id="format-heading">${t('What the file holds')}</h2>
      <p>${t('A CSV or XLSX file, its first line the column names:')} <strong>${columns.join(', ')}</strong>${t(', then one column per indicator.')} ${codesSaid} ${t('A column the system does not know yet is offered for mapping after the upload.')}</p>
      <a class="button secondary" download=${`${kind}-template.csv`} href=${`data:text/csv;charset=utf-8,${encodeURIComponent(templateCsv(kind, catalog))}`}>${FILE_KINDS[kind].template()}</a>
    </section>
    <form class="stack" onSubmit=${upload}>
      <label>${t('File (CSV or XLSX)')} <input type="file" name="docfile" accept=".csv,.xlsx" required /></label>
      <label>${t('Document type')}
        <select name="file_type" value=${kind} onChange=${(e) => setKind(e.target.value)}>
          ${Object.entries(FILE_KINDS).map(([value, k]) => html`<option key=${value} value=${value}>${k.label()}</option>`)}
        </select>
      </label>
      <label>${t('When the file gives one cell two different values')}
        <select name="conflict">
          ${Object.entries(CONFLICT_CHOICES).map(([value, label]) => html`<option key=${value} value=${value}>${label()}</option>`)}
        </select>
      </label>
      <button type="submit" disabled=${phase === 'running'}>${t('Upload')}</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      job &&
      html`<section aria-label=${t('Progress')} class="progress">
      <label>${job.kind === 'refresh_master' ? t('Applying mappings to {file}', { file: fileName }) : t('Reading {file}', { file: fileName })}
        <progress max="100" value=${percent}>${percent} %</progress></label>
      <p aria-live="polite"><span class="percent">${percent} %</span> ${progressWords(job, stats, unmapped, phase)}</p>
    </section>`
    }
    ${phase === 'summary' && stats && html`<${Summary} stats=${stats} />`}
    ${phase === 'summary' && stats?.duplicates?.count > 0 && html`<${Duplicates} duplicates=${stats.duplicates} policy=${documentRow?.conflict} />`}
    ${phase === 'summary' && unmapped.length > 0 && html`<${Mapping} codes=${unmapped} catalog=${catalog} mayMap=${mayMap} onSubmit=${applyMappings} />`}
    <${Jobs} refresh=${jobsShown} catalog=${catalog} />`
}

/** What the progress line says: the step at work, then, once done, what was saved and what waits. */
function progressWords(job, stats, unmapped, phase) {
  if (phase !== 'summary' || !stats) return job.state === 'completed' ? t('done') : `${job.progress ? stageWords(job.progress) : stateWord(job.state)}…`
  const d = stats.datapoints ?? {}
  const saved = (d.inserted ?? 0) + (d.updated ?? 0)
  const done = tn(saved, 'Done: {n} value saved.', 'Done: {n} values saved.', { n: formatCount(saved) })
  return unmapped.length
    ? `${done} ${tn(unmapped.length, '{n} code waits for mapping below.', '{n} codes wait for mapping below.', { n: formatCount(unmapped.length) })}`
    : done
}

function Summary({ stats }) {
  const d = stats.datapoints ?? {}
  const rows = stats.rows ?? {}
  const items = [
    [t('Rows processed'), rows.processed],
    [t('Rows outside your locations'), rows.location_forbidden],
    [t('Rows without a known location'), rows.missing_location],
    [t('Rows without a known campaign'), rows.missing_campaign],
    [t('Values inserted'), d.inserted],
    [t('Values updated'), d.updated],
    [t('Values unchanged'), d.unchanged],
    [t('Campaigns recomputed'), (stats.campaigns_recomputed ?? []).length],
  ]
  return html`<section aria-labelledby="summary-heading" class="summary">
    <h2 id="summary-heading">${t('Summary')}</h2>
    <dl>${items.map(([label, value]) => html`<div key=${label}><dt>${label}</dt><dd>${value ?? 0}</dd></div>`)}</dl>
  </section>`
}

/** A file's line number for a data row (its 0-based index below the header line). */
const lineOf = (rowNumber) => rowNumber + 2

/**
 * What a cell's listed lines leave out: the report lists the first lines of a cell repeated on many
 * (a report kept from before `row_count` existed lists them all).
 */
function unlisted({ row_count: rows, row_numbers: listed }) {
  const more = (rows ?? listed.length) - listed.length
  return more > 0 ? ` ${tn(more, '… and {n} more line', '… and {n} more lines', { n: formatCount(more) })}` : ''
}

/** The cells the file gives different values, with the lines and values, and what was saved. */
function Duplicates({ duplicates, policy }) {
  const outcome = { reject: t('None of these cells was saved.'), last: t('The later line’s value was saved.'), first: t('The earlier line’s value was saved.') }
  const more = duplicates.count - duplicates.items.length
  return html`<section aria-labelledby="duplicates-heading" class="duplicates">
    <h2 id="duplicates-heading">${t('Cells given two different values')}</h2>
    <p>${tn(duplicates.count, '{n} cell has different values on different lines of the file.', '{n} cells have different values on different lines of the file.', { n: formatCount(duplicates.count) })} ${outcome[policy] ?? ''}</p>
    <div class="table-scroll" tabindex="0" role="region" aria-label=${t('Cells given two different values, scrollable')}><table>
      <caption class="visually-hidden">${t('Cells given two different values')}</caption>
      <thead><tr><th scope="col">${t('Row key')}</th><th scope="col">${t('Column')}</th><th scope="col">${t('Lines')}</th><th scope="col">${t('Values')}</th></tr></thead>
      <tbody>${duplicates.items.map(
        (d) =>
          html`<tr key=${`${d.key} ${d.column}`}><td>${d.key}</td><td>${d.column}</td><td>${d.row_numbers.map(lineOf).join(', ')}${unlisted(d)}</td><td>${d.values.join(' · ')}${unlisted(d)}</td></tr>`,
      )}</tbody>
    </table></div>
    ${more > 0 && html`<p>${t('and {n} more.', { n: formatCount(more) })}</p>`}
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
    <h2 id="mapping-heading">${t('Codes to map')}</h2>
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

/** The titles of the documents some jobs worked on, by id. */
async function documentTitles(jobs) {
  const ids = [...new Set(jobs.map((j) => j.params?.document_id).filter((id) => id !== undefined))]
  if (ids.length === 0) return new Map()
  const found = await list(`/document/${query({ id__in: ids, fields: 'id,doc_title', limit: 0 })}`).catch(() => [])
  return new Map(found.map((d) => [d.id, d.doc_title]))
}

function Jobs({ refresh, catalog }) {
  const [jobs, setJobs] = useState([])
  const [titles, setTitles] = useState(new Map())
  useEffect(() => {
    list('/job/?limit=20&order_by=-id').then(
      async (found) => {
        setTitles(await documentTitles(found))
        setJobs(found)
      },
      () => setJobs([]),
    )
  }, [refresh])
  const subject = (j) =>
    j.params?.document_id !== undefined
      ? titles.has(j.params.document_id)
        ? fileNameOf(titles.get(j.params.document_id))
        : t('Document {id}', { id: j.params.document_id })
      : j.params?.campaign_id !== undefined
        ? (catalog.campaignName.get(j.params.campaign_id) ?? t('Campaign {id}', { id: j.params.campaign_id }))
        : ''
  return html`<section aria-labelledby="jobs-heading">
    <h2 id="jobs-heading">${t('Jobs')}</h2>
    ${
      jobs.length === 0
        ? html`<p>${t('No jobs yet.')}</p>`
        : html`<div class="table-scroll" tabindex="0" role="region" aria-label=${t('Jobs, scrollable')}><table>
          <caption class="visually-hidden">${t('The latest jobs')}</caption>
          <thead><tr><th scope="col">${t('Job')}</th><th scope="col">${t('Step')}</th><th scope="col">${t('Document or campaign')}</th><th scope="col">${t('State')}</th><th scope="col">${t('Finished')}</th></tr></thead>
          <tbody>${jobs.map(
            (j) =>
              html`<tr key=${j.id}><td>${j.id}</td><td>${STEP_NAMES[j.kind]?.() ?? j.kind}</td><td>${subject(j)}</td><td>${stateWord(j.state)}</td><td>${j.finished_at ? formatTime(j.finished_at) : ''}</td></tr>`,
          )}</tbody>
        </table></div>`
    }
  </section>`
}
