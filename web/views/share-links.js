// "Share": read-only links to a dashboard for people without an account, made by its owner (or a
// superuser) for the view's location or the whole dashboard, with an optional end; listed with their
// limits and revoked here. A link's address is shown once, when it is made.
import { useEffect, useState } from 'preact/hooks'
import { change, list } from '../api.js'
import { formatTime } from '../format.js'
import { html } from '../html.js'
import { t } from '../i18n.js'

export function ShareLinks({ dashboardId, view, catalog }) {
  const [links, setLinks] = useState([])
  const [made, setMade] = useState('')
  const [error, setError] = useState('')
  const [expires, setExpires] = useState('')
  const reload = () => list(`/dashboard_share/?dashboard_id=${dashboardId}&limit=0`).then(setLinks, (e) => setError(e.message))
  useEffect(() => {
    reload()
  }, [dashboardId])
  const create = async () => {
    setError('')
    try {
      const body = { dashboard_id: Number(dashboardId), location_id: view.locationId ?? undefined, expires_at: expires ? `${expires}T23:59:59` : undefined }
      const answer = await change('POST', '/dashboard_share/', body)
      setMade(`${window.location.origin}${answer.url}`)
      await reload()
    } catch (e) {
      setError(e.message)
    }
  }
  const revoke = async (id) => {
    setError('')
    try {
      await change('DELETE', `/dashboard_share/${id}/`)
      await reload()
    } catch (e) {
      setError(e.message)
    }
  }
  const place = view.locationId === null ? t('the whole dashboard') : catalog.locationName.get(view.locationId)
  return html`<details class="share">
    <summary>${t('Share this dashboard')}</summary>
    <div class="share-panel">
      <p>${t('Anyone with a read-only link sees this dashboard, and its exports, without signing in: never more than you may see.')}</p>
      <div class="inline">
        <label>${t('Ends on (optional)')} <input type="date" value=${expires} onInput=${(e) => setExpires(e.target.value)} /></label>
        <button onClick=${create}>${t('Create a link for {place}', { place })}</button>
      </div>
      ${made && html`<label>${t('New link (copy it now: it is shown once)')} <input class="share-url" readonly value=${made} onFocus=${(e) => e.target.select()} /></label>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${
        links.length > 0 &&
        html`<ul class="share-list" aria-label=${t('Links to this dashboard')}>
          ${links.map(
            (link) => html`<li key=${link.id}>
              ${t('Made {time}', { time: formatTime(link.created_at) })} · ${link.location_id === null ? t('whole dashboard') : (catalog.locationName.get(link.location_id) ?? t('Location {id}', { id: link.location_id }))}
              · ${link.expires_at ? t('ends {time}', { time: formatTime(link.expires_at) }) : t('no end')}
              <button class="secondary" onClick=${() => revoke(link.id)} aria-label=${t('Revoke the link made {time}', { time: formatTime(link.created_at) })}>${t('Revoke')}</button>
            </li>`,
          )}
        </ul>`
      }
    </div>
  </details>`
}
