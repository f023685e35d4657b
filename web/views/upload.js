// Uploads: a file and its document type → the document → transform as a background job with a live
// progress bar → the ingest summary → the codes no mapping knows, mapped here → applied as another
// job. Below, the jobs this user may see.
import { useEffect, useState } from '/app/vendor/preact-hooks.mjs'
import { api, change, list } from '../api.js'
import { html } from '../html.js'

const FINISHED = new Set(['completed', 'failed', 'cancelled'])
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
  if (job.state !== 'completed') throw new Error(job.error?.message ?? `The job ${job.state}`)
  return job.result
}

/** How far a job is, in percent: its last reported stage, 100 once done. */
function percentOf(job) {
  if (!job) return 0
  if (job.state === 'completed') return 100
  const { done = 0, total = 0 } = job.progress ?? {}
  return total > 0 ? Math.min(99, Math.floor((100 * done) / total)) : 0
}

export function Upload({ catalog }) {
  const [phase, setPhase] = useState('choose')
  const [job, setJob] = useState(null)
  const [documentRow, setDocumentRow] = useState(null)
  const [stats, setStats] = useState(null)
  const [unmapped, setUnmapped] = useState([])
  const [error, setError] = useState('')
  const [jobsShown, setJobsShown] = useState(0)

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
    const file = form.get('docfile')
    form.set('doc_title', file.name)
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
  return html`<h1>Upload</h1>
    <form class="stack" onSubmit=${upload}>
      <label>File (CSV or XLSX) <input type="file" name="docfile" accept=".csv,.xlsx" required /></label>
      <label>Document type
        <select name="file_type"><option value="campaign">Campaign file</option><option value="date">Date file</option></select>
      </label>
      <button type="submit" disabled=${phase === 'running'}>Upload</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${job &&
    html`<section aria-label="Progress" class="progress">
      <label>${job.kind === 'refresh_master' ? 'Applying mappings' : 'Transforming'} ${documentRow?.doc_title}
        <progress max="100" value=${percent}>${percent} %</progress></label>
      <p aria-live="polite"><span class="percent">${percent} %</span> ${job.progress?.stage ?? job.state}</p>
    </section>`}
    ${phase === 'summary' && stats && html`<${Summary} stats=${stats} />`}
    ${phase === 'summary' && unmapped.length > 0 && html`<${Mapping} codes=${unmapped} catalog=${catalog} onSubmit=${applyMappings} />`}
    <${Jobs} refresh=${jobsShown} />`
}

function Summary({ stats }) {
  const d = stats.datapoints ?? {}
  const rows = stats.rows ?? {}
  const items = [
    ['Rows processed', rows.processed],
    ['Rows outside your locations', rows.location_forbidden],
    ['Rows without a known location', rows.missing_location],
    ['Rows without a known campaign', rows.missing_campaign],
    ['Values inserted', d.inserted],
    ['Values updated', d.updated],
    ['Values unchanged', d.unchanged],
    ['Campaigns recomputed', (stats.campaigns_recomputed ?? []).length],
  ]
  return html`<section aria-labelledby="summary-heading" class="summary">
    <h2 id="summary-heading">Summary</h2>
    <dl>${items.map(([label, value]) => html`<div key=${label}><dt>${label}</dt><dd>${value ?? 0}</dd></div>`)}</dl>
  </section>`
}

const CHOICES = {
  indicator: (catalog) => catalog.indicators.map((i) => [i.id, i.short_name]),
  location: (catalog) => catalog.locations.map((l) => [l.id, l.name]),
  campaign: (catalog) => catalog.campaigns.map((c) => [c.id, c.name]),
}

function Mapping({ codes, catalog, onSubmit }) {
  return html`<section aria-labelledby="mapping-heading">
    <h2 id="mapping-heading">Codes to map</h2>
    <p>These codes of the file match nothing yet. Choose what each one means, then apply.</p>
    <form class="stack" onSubmit=${onSubmit}>
      ${codes.map(
        (code) => html`<label key=${code.id}>${code.content_type} “${code.source_object_code}”
          <select name=${`map-${code.id}`}>
            <option value="">Leave unmapped</option>
            ${CHOICES[code.content_type](catalog).map(([id, name]) => html`<option key=${id} value=${id}>${name}</option>`)}
          </select>
        </label>`,
      )}
      <button type="submit">Apply mappings</button>
    </form>
  </section>`
}

function Jobs({ refresh }) {
  const [jobs, setJobs] = useState([])
  useEffect(() => {
    list('/job/?limit=20&order_by=-id').then(setJobs, () => setJobs([]))
  }, [refresh])
  return html`<section aria-labelledby="jobs-heading">
    <h2 id="jobs-heading">Jobs</h2>
    ${jobs.length === 0
      ? html`<p>No jobs yet.</p>`
      : html`<div class="table-scroll"><table>
          <thead><tr><th scope="col">Job</th><th scope="col">Step</th><th scope="col">Document or campaign</th><th scope="col">State</th><th scope="col">Finished</th></tr></thead>
          <tbody>${jobs.map(
            (j) => html`<tr key=${j.id}><td>${j.id}</td><td>${j.kind}</td><td>${j.params?.document_id ?? j.params?.campaign_id ?? ''}</td><td>${j.state}</td><td>${j.finished_at ?? ''}</td></tr>`,
          )}</tbody>
        </table></div>`}
  </section>`
}
