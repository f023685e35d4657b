// Dashboards: the list of every dashboard, and a new one made; what a taken title says.
import { useState } from 'preact/hooks'
import { change, freeTitle, list } from '../api.js'
import { html } from '../html.js'
import { useRead } from './use-read.js'
import { t } from '../i18n.js'

export function DashboardList({ navigate }) {
  const { value: dashboards, error: failed } = useRead(() => list('/dashboard/?limit=0&order_by=title'), [], null)
  const [createError, setError] = useState('')
  const error = failed?.message ?? createError
  const create = async (event) => {
    event.preventDefault()
    const title = String(new FormData(event.target).get('title'))
    try {
      const dashboard = await change('POST', '/dashboard/', { title, rows: [] })
      navigate(`#/dashboard/${dashboard.id}/edit`)
    } catch (e) {
      setError(e.code === 'UNIQUE_VIOLATION' ? await takenTitle('dashboard', title) : e.message)
    }
  }
  return html`<h1>${t('Dashboards')}</h1>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${
      dashboards === null
        ? html`<p>${t('Loading…')}</p>`
        : html`<ul class="cards">
          ${dashboards.map((d) => html`<li key=${d.id}><a href=${`#/dashboard/${d.id}`}>${d.title}</a>${d.description ? html`<span> — ${d.description}</span>` : ''}</li>`)}
        </ul>`
    }
    <form class="inline" onSubmit=${create}>
      <label>${t('New dashboard title')} <input name="title" required maxlength="255" /></label>
      <button type="submit">${t('Create dashboard')}</button>
    </form>`
}

/** What to say when a title is taken: titles are shared by everyone, so name a free one. */
export async function takenTitle(resource, title) {
  const free = await freeTitle(resource, title)
  return resource === 'dashboard'
    ? t('“{title}” is already the title of a dashboard (titles are shared by everyone). “{free}” is free.', { title, free })
    : t('“{title}” is already the title of a chart (titles are shared by everyone). “{free}” is free.', { title, free })
}
