import { list, query } from '../api.js'
import { fileNameOf, formatTime } from '../format.js'
import { html } from '../html.js'
import { useRead } from './use-read.js'
import { t } from '../i18n.js'
import { routeHash } from '../route.js'

/** What each pipeline step is called here. */
export const STEP_NAMES = {
  transform_upload: () => t('Read the file'),
  refresh_master: () => t('Apply mappings'),
  agg_refresh: () => t('Aggregate a campaign'),
  revert_document: () => t('Revert an upload'),
}

/** A job's state in words (the API's name otherwise). */
export function stateWord(state) {
  const words = { created: t('waiting'), retry: t('waiting'), active: t('running'), completed: t('completed'), failed: t('failed'), cancelled: t('cancelled') }
  return words[state] ?? state
}

/** The latest jobs this user may see, newest first (the API limits a restricted user to her own). */
const latestJobs = () => list('/job/?limit=50&order_by=-id&fields=id,kind,params,state,finished_at')

/**
 * A document's state: its latest job's step and state, or, without one the reader may see (another
 * user's upload), whether its file was read.
 */
function documentState(doc, jobs) {
  const job = jobs.find((j) => j.params?.document_id === doc.id)
  if (job) return t('{step}: {state}', { step: STEP_NAMES[job.kind]?.() ?? job.kind, state: stateWord(job.state) })
  return doc.processed ? t('file read') : t('uploaded')
}

export function UploadLists({ refresh, catalog }) {
  const jobs = useRead(() => latestJobs().catch(() => []), [refresh], []).value
  const path = `/document/${query({ fields: 'id,doc_title,file_type,created_at,processed,guid', order_by: '-id', limit: 21 })}`
  // Typed values are kept as one "Data Entry" document: nobody uploaded it, and it has no file to show.
  const documents = useRead(
    () =>
      list(path).then(
        (docs) => docs.filter((d) => d.guid !== 'data-entry').slice(0, 20),
        () => [],
      ),
    [refresh],
    [],
  ).value
  const titles = new Map(documents.map((d) => [d.id, d.doc_title]))
  const subject = (j) => {
    const doc = j.params?.document_id
    if (doc !== undefined) {
      const name = titles.has(doc) ? fileNameOf(titles.get(doc)) : t('Document {id}', { id: doc })
      return html`<a href=${routeHash(`#/upload/${doc}`, { job: j.id })}>${name}</a>`
    }
    const campaign = j.params?.campaign_id
    return campaign !== undefined ? (catalog.campaignName.get(campaign) ?? t('Campaign {id}', { id: campaign })) : ''
  }
  return html`<section aria-labelledby="documents-heading">
      <h2 id="documents-heading">${t('Documents')}</h2>
      ${
        documents.length === 0
          ? html`<p>${t('No documents yet.')}</p>`
          : html`<div class="table-scroll" tabindex="0" role="region" aria-label=${t('Documents, scrollable')}><table>
          <caption class="visually-hidden">${t('The latest documents')}</caption>
          <thead><tr><th scope="col">${t('File')}</th><th scope="col">${t('Type')}</th><th scope="col">${t('Uploaded')}</th><th scope="col">${t('State')}</th></tr></thead>
          <tbody>${documents.map(
            (d) =>
              html`<tr key=${d.id}><td><a href=${`#/upload/${d.id}`}>${fileNameOf(d.doc_title)}</a></td><td>${d.file_type === 'date' ? t('Date file') : t('Campaign file')}</td><td>${formatTime(d.created_at)}</td><td>${documentState(d, jobs)}</td></tr>`,
          )}</tbody>
        </table></div>`
      }
    </section>
    <section aria-labelledby="jobs-heading">
      <h2 id="jobs-heading">${t('Jobs')}</h2>
      ${
        jobs.length === 0
          ? html`<p>${t('No jobs yet.')}</p>`
          : html`<div class="table-scroll" tabindex="0" role="region" aria-label=${t('Jobs, scrollable')}><table>
          <caption class="visually-hidden">${t('The latest jobs')}</caption>
          <thead><tr><th scope="col">${t('Job')}</th><th scope="col">${t('Step')}</th><th scope="col">${t('Document or campaign')}</th><th scope="col">${t('State')}</th><th scope="col">${t('Finished')}</th></tr></thead>
          <tbody>${jobs
            .slice(0, 20)
            .map(
              (j) =>
                html`<tr key=${j.id}><td>${j.id}</td><td>${STEP_NAMES[j.kind]?.() ?? j.kind}</td><td>${subject(j)}</td><td>${stateWord(j.state)}</td><td>${j.finished_at ? formatTime(j.finished_at) : ''}</td></tr>`,
            )}</tbody>
        </table></div>`
      }
    </section>`
}
