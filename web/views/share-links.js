// "Share": read-only links to a dashboard for people without an account, made by its owner (or a
// superuser) for the view's location or the whole dashboard, with an optional end; listed with their
// limits and revoked here. A link keeps the view it is made from (campaign, location, dates) and opens
// there. A link's address is shown once, when it is made, with a button that copies it; the list shows
// each link's label, asked when it is made, and how its address ends, and revoking asks by both.
import { useEffect, useState } from 'preact/hooks'
import { change, list } from '../api.js'
import { formatTime } from '../format.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { CopyButton } from './copy-button.js'

/**
 * The last second of `day` (YYYY-MM-DD) where the reader is, as the API's timestamps are written: UTC,
 * without a zone designator. A link that ends on the 15th in Bogotá ends at 2027-01-16T04:59:59.
 */
const endOfDay = (day) => new Date(`${day}T23:59:59`).toISOString().slice(0, 19)

/** A link as a person tells it apart: its label and how its address ends. */
const linkName = (link) =>
  `“${link.label ?? t('made {time}', { time: formatTime(link.created_at) })}”${link.token_end ? ` (${t('address ending …{end}', { end: link.token_end })})` : ''}`

/**
 * What a listed link shows: what it is limited to (a location, or nothing: the whole dashboard), then
 * the view it opens on (a campaign, dates), which its reader may change, so that two links read apart.
 */
function shownAt(link, catalog) {
  const opensOn = [
    link.view?.campaign && catalog.campaignName.get(link.view.campaign),
    (link.view?.start_date || link.view?.end_date) && `${link.view.start_date ?? '…'} – ${link.view.end_date ?? '…'}`,
  ].filter(Boolean)
  return [
    link.location_id === null
      ? t('whole dashboard')
      : t('{place} only', { place: catalog.locationName.get(link.location_id) ?? t('Location {id}', { id: link.location_id }) }),
    opensOn.length > 0 && t('opens on {view}', { view: opensOn.join(', ') }),
  ]
    .filter(Boolean)
    .join(' · ')
}

export function ShareLinks({ dashboardId, view, catalog }) {
  const [links, setLinks] = useState([])
  // The new link's address and the view it opens: shown while the page shows that view (a drill-down
  // since, and the address would open the view left; "Create" then offers one for the view shown).
  const [made, setMade] = useState({ id: null, url: '', view: '' })
  const [error, setError] = useState('')
  const [expires, setExpires] = useState('')
  const [label, setLabel] = useState('')
  const viewKey = JSON.stringify([view.campaignId, view.locationId, view.startDate, view.endDate])
  const shown = made.view === viewKey ? made.url : ''
  // The new link as the list names it: its label and how its address ends.
  const madeLink = shown && links.find((link) => link.id === made.id)
  const reload = () => list(`/dashboard_share/?dashboard_id=${dashboardId}&limit=0`).then(setLinks, (e) => setError(e.message))
  useEffect(() => {
    reload()
  }, [dashboardId])
  const create = async () => {
    setError('')
    if (!label.trim()) return setError(t('Give the link a label: who or what it is for.'))
    try {
      const body = {
        label: label.trim(),
        dashboard_id: Number(dashboardId),
        location_id: view.locationId ?? undefined,
        expires_at: expires ? endOfDay(expires) : undefined,
        view: { campaign: view.campaignId, location: view.locationId, start_date: view.startDate, end_date: view.endDate },
      }
      const answer = await change('POST', '/dashboard_share/', body)
      setMade({
        id: answer.id,
        url: `${window.location.origin}${answer.url}`,
        view: viewKey,
      })
      setLabel('')
      await reload()
    } catch (e) {
      setError(e.message)
    }
  }
  const revoke = async (link) => {
    setError('')
    // Asked by the link's name and the end of its address: the one its holder has, not the one above it.
    if (!window.confirm(t('Revoke the link {name}? Whoever holds it can no longer open this dashboard.', { name: linkName(link) }))) return
    try {
      await change('DELETE', `/dashboard_share/${link.id}/`)
      // The address just made, revoked: no longer offered to copy.
      if (link.id === made.id) setMade({ id: null, url: '', view: '' })
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
        <label>${t('Label (who or what it is for)')} <input class="share-label" maxlength="100" value=${label} onInput=${(e) => setLabel(e.target.value)} /></label>
        <label>${t('Ends on (optional)')} <input type="date" value=${expires} onInput=${(e) => setExpires(e.target.value)} /></label>
        <button onClick=${create}>${t('Create a link for {place}', { place })}</button>
      </div>
      ${
        shown &&
        html`<div class="inline"><label>${t('New link (copy it now: it is shown once)')} <input class="share-url" readonly value=${shown} onFocus=${(e) => e.target.select()} /></label>
          <${CopyButton} text=${shown} selector=".share-url" /></div>
          ${madeLink && html`<p class="hint share-made">${t('The link “{label}”, its address ending …{end}, as the list below names it.', { label: madeLink.label ?? t('No label'), end: madeLink.token_end })}</p>`}`
      }
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${
        links.length > 0 &&
        html`<ul class="share-list" aria-label=${t('Links to this dashboard')}>
          ${links.map(
            (link) => html`<li key=${link.id}>
              <strong>${link.label ?? t('No label')}</strong>${link.token_end ? html` · <code>…${link.token_end}</code>` : ''}${' · '}
              ${t('Made {time}', { time: formatTime(link.created_at) })} · ${shownAt(link, catalog)} · ${link.expires_at ? t('ends {time}', { time: formatTime(link.expires_at) }) : t('no end')}${' '}
              <button class="secondary" onClick=${() => revoke(link)} aria-label=${t('Revoke the link {name}', { name: linkName(link) })}>${t('Revoke')}</button>
            </li>`,
          )}
        </ul>`
      }
    </div>
  </details>`
}
