// A dashboard's editing (add, build, remove, reorder charts) as a draft that survives leaving the page,
// saved through the API. Who may not change a dashboard is told to duplicate it.
import { useEffect, useState } from 'preact/hooks'
import { change, list, mayChange } from '../api.js'
import { clearDraft, loadDraft, saveDraft } from '../drafts.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { chartsOf } from '../dashboard.js'
import { takenTitle } from './dashboards.js'

/** Charts per row when a dashboard is saved from the editor. */
const PER_ROW = 2

/** The editor's draft of a dashboard: what the page shows and what saving sends. */
const draftOf = (dashboard) => ({
  title: dashboard.title,
  description: dashboard.description ?? '',
  uuids: chartsOf(dashboard).map((c) => c.uuid),
  changed: false,
})

export function DashboardEditor({ id, user, navigate }) {
  const [dashboard, setDashboard] = useState(null)
  const [draft, setDraftState] = useState(null)
  const [allCharts, setAllCharts] = useState([])
  const [adding, setAdding] = useState('')
  const [error, setError] = useState('')
  useEffect(() => {
    Promise.all([change('GET', `/dashboard/${id}/`), list('/custom_chart/?fields=id,uuid,title,owner_id&limit=0&order_by=title')]).then(
      ([d, all]) => {
        setDashboard(d)
        setDraftState(loadDraft('dashboard', id) ?? draftOf(d))
        setAllCharts(all)
      },
      (e) => setError(e.message),
    )
  }, [id])
  // Leaving the page with unsaved changes asks first.
  useEffect(() => {
    if (!draft?.changed) return
    const warn = (event) => event.preventDefault()
    addEventListener('beforeunload', warn)
    return () => removeEventListener('beforeunload', warn)
  }, [draft?.changed])
  if (!dashboard || !draft) return error ? html`<p class="error" role="alert">${error}</p>` : html`<p>${t('Loading…')}</p>`
  // Said before any edit, not at save: someone who may not change it duplicates it to edit.
  if (user && !mayChange(user, dashboard))
    return html`<h1>${t('Edit dashboard')}</h1>
      <p class="error" role="alert">${t('“{title}” is someone else’s dashboard: open it and duplicate it to edit your own copy.', { title: dashboard.title })}</p>
      <a href=${`#/dashboard/${id}`}>${t('Open the dashboard')}</a>`
  const setDraft = (patch) => {
    const next = { ...draft, ...patch, changed: true }
    saveDraft('dashboard', id, next)
    setDraftState(next)
  }
  const byUuid = new Map(allCharts.map((c) => [c.uuid, c]))
  const charts = draft.uuids.map((uuid) => byUuid.get(uuid) ?? { uuid, title: uuid })
  const move = (from, to) => {
    if (to < 0 || to >= charts.length) return
    const uuids = draft.uuids.slice()
    uuids.splice(to, 0, uuids.splice(from, 1)[0])
    setDraft({ uuids })
  }
  const save = async (event) => {
    event.preventDefault()
    const rows = []
    for (let i = 0; i < draft.uuids.length; i += PER_ROW) rows.push({ layout: PER_ROW, charts: draft.uuids.slice(i, i + PER_ROW) })
    try {
      await change('PATCH', `/dashboard/${id}/`, { title: draft.title, description: draft.description, rows })
      clearDraft('dashboard', id)
      navigate(`#/dashboard/${id}`)
    } catch (e) {
      setError(e.code === 'UNIQUE_VIOLATION' ? await takenTitle('dashboard', draft.title) : e.message)
    }
  }
  const cancel = () => {
    if (draft.changed && !confirm(t('Discard the changes to this dashboard?'))) return
    clearDraft('dashboard', id)
    navigate(`#/dashboard/${id}`)
  }
  const remove = async () => {
    if (!confirm(t('Delete the dashboard “{title}”? Its charts stay.', { title: dashboard.title }))) return
    try {
      await change('DELETE', `/dashboard/${id}/`)
      clearDraft('dashboard', id)
      navigate('#/')
    } catch (e) {
      setError(e.message)
    }
  }
  const present = new Set(draft.uuids)
  return html`<h1>${t('Edit dashboard')}</h1>
    ${draft.changed && html`<p class="notice" role="status">${t('Unsaved changes: save the dashboard to keep them.')}</p>`}
    <form class="stack" onSubmit=${save}>
      <label>${t('Title')} <input name="title" required maxlength="255" value=${draft.title} onInput=${(e) => setDraft({ title: e.target.value })} /></label>
      <label>${t('Description')} <input name="description" maxlength="1000" value=${draft.description} onInput=${(e) => setDraft({ description: e.target.value })} /></label>
      <h2>${t('Charts, in order')}</h2>
      <${ChartOrder} charts=${charts} dashboardId=${id} onMove=${move} onRemove=${(uuid) => setDraft({ uuids: draft.uuids.filter((u) => u !== uuid) })} />
      <div class="inline">
        <label>${t('Add a saved chart')}
          <select value=${adding} onChange=${(e) => setAdding(e.target.value)}>
            <option value="">${t('Choose a chart')}</option>
            ${allCharts.filter((c) => !present.has(c.uuid)).map((c) => html`<option key=${c.uuid} value=${c.uuid}>${c.title}</option>`)}
          </select>
        </label>
        <button type="button" class="secondary" disabled=${!adding} onClick=${() => {
          setDraft({ uuids: [...draft.uuids, adding] })
          setAdding('')
        }}>${t('Add chart')}</button>
        <a class="button secondary" href=${`#/chart/new/${id}`}>${t('Build a new chart')}</a>
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <div class="inline">
        <button type="submit">${t('Save dashboard')}</button>
        <button type="button" class="secondary" onClick=${cancel}>${t('Cancel')}</button>
        <button type="button" class="danger" onClick=${remove}>${t('Delete dashboard')}</button>
      </div>
    </form>`
}

/**
 * Puts a chart on a dashboard's draft (the editor shows it, unsaved, when it opens), in the place of
 * `replacing` when that is there; the dashboard is read only when no draft was kept.
 */
export async function addToDraft(dashboardId, uuid, replacing) {
  const id = String(dashboardId)
  const draft = loadDraft('dashboard', id) ?? draftOf(await change('GET', `/dashboard/${id}/`))
  const uuids =
    replacing && draft.uuids.includes(replacing)
      ? draft.uuids.map((u) => (u === replacing ? uuid : u))
      : draft.uuids.includes(uuid)
        ? draft.uuids
        : [...draft.uuids, uuid]
  saveDraft('dashboard', id, { ...draft, uuids, changed: true })
}

/** A dashboard's charts in order, each with its moves up and down, its editor and its removal. */
function ChartOrder({ charts, dashboardId, onMove, onRemove }) {
  return html`<ol class="cards">
        ${charts.map(
          (c, i) => html`<li key=${c.uuid} class="chart-item"><span>${c.title}</span>
            <span class="actions">
              <button type="button" class="secondary" aria-label=${t('Move {title} up', { title: c.title })} onClick=${() => onMove(i, i - 1)} disabled=${i === 0}>${t('Up')}</button>
              <button type="button" class="secondary" aria-label=${t('Move {title} down', { title: c.title })} onClick=${() => onMove(i, i + 1)} disabled=${i === charts.length - 1}>${t('Down')}</button>
              ${c.id && html`<a class="button secondary" href=${`#/chart/${c.id}/edit/${dashboardId}`} aria-label=${t('Edit {title}', { title: c.title })}>${t('Edit')}</a>`}
              <button type="button" class="secondary" aria-label=${t('Remove {title}', { title: c.title })} onClick=${() => onRemove(c.uuid)}>${t('Remove')}</button>
            </span></li>`,
        )}
      </ol>`
}
