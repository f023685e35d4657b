// "Share": read-only links to a dashboard for people without an account, made by its owner (or a
// superuser) for the view's location or the whole dashboard, with an optional end; listed with their
// limits and revoked here. A link's address is shown once, when it is made.
import { useEffect, useState } from 'preact/hooks'
import { change, list } from '../api.js'
import { formatTime } from '../format.js'
import { html } from '../html.js'

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
  const place = view.locationId === null ? 'the whole dashboard' : catalog.locationName.get(view.locationId)
  return html`<details class="share">
    <summary>Share</summary>
    <div class="share-panel">
      <p>Anyone with a read-only link sees this dashboard, and its exports, without signing in: never more than you may see.</p>
      <div class="inline">
        <label>Ends on (optional) <input type="date" value=${expires} onInput=${(e) => setExpires(e.target.value)} /></label>
        <button onClick=${create}>Create a link for ${place}</button>
      </div>
      ${made && html`<label>New link (copy it now: it is shown once) <input class="share-url" readonly value=${made} onFocus=${(e) => e.target.select()} /></label>`}
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${
        links.length > 0 &&
        html`<ul class="share-list" aria-label="Links to this dashboard">
          ${links.map(
            (link) => html`<li key=${link.id}>
              Made ${formatTime(link.created_at)} · ${link.location_id === null ? 'whole dashboard' : (catalog.locationName.get(link.location_id) ?? `location ${link.location_id}`)}
              · ${link.expires_at ? `ends ${formatTime(link.expires_at)}` : 'no end'}
              <button class="secondary" onClick=${() => revoke(link.id)} aria-label=${`Revoke the link made ${formatTime(link.created_at)}`}>Revoke</button>
            </li>`,
          )}
        </ul>`
      }
    </div>
  </details>`
}
