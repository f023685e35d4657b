// The web app for people (served at /app/, built only on the public API): sign in with a password (or
// set one with a reset link), then dashboards of charts and maps, the data browser, uploads, your
// account and, for superusers, administration.
// Preact with htm templates: no build step, every file served as it is here. Pages are hash routes.
import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, loadCatalog } from './api.js'
import { html } from './html.js'
import { language, t, tn } from './i18n.js'
import { LanguagePicker } from './views/language-picker.js'
import { Account, ResetPassword } from './views/account.js'
import { Admin } from './views/admin.js'
import { ChartBuilder } from './views/chart-builder.js'
import { DashboardList } from './views/dashboards.js'
import { DashboardView } from './views/dashboard-view.js'
import { DashboardEditor } from './views/dashboard-editor.js'
import { parseRoute } from './route.js'
import { DataBrowser } from './views/data-browser.js'
import { DataQuality } from './views/quality.js'
import { DataEntry } from './views/data-entry.js'
import { Catalog } from './views/catalog.js'
import { forgetOffline, SIGNED_IN_ITEM, signedInNow, signedInOffline } from './offline.js'
import { bindOutbox, discardMine, entries, flush, settled } from './outbox.js'
import { SharedDashboard } from './views/shared.js'
import { Upload } from './views/upload.js'
import { refusalText } from './api-messages.js'

function SignIn({ onSignedIn }) {
  const [error, setError] = useState('')
  // While the server checks the password (scrypt: a noticeable moment), the button says so and waits.
  const [busy, setBusy] = useState(false)
  const submit = async (event) => {
    event.preventDefault()
    if (busy) return
    const form = new FormData(event.target)
    setBusy(true)
    setError('')
    const res = await api('POST', '/session/', { username: form.get('username'), password: form.get('password') })
      .catch(() => null)
      .finally(() => setBusy(false))
    if (!res) setError(t('No network: sign in once it is back.'))
    else if (res.status === 200) onSignedIn(res.body)
    else setError(refusalText(res.body, t('Sign-in failed ({status})', { status: res.status })))
  }
  return html`<main id="content">
    <h1>${t('Sign in')}</h1>
    <form class="sign-in" onSubmit=${submit} aria-busy=${busy ? 'true' : undefined}>
      <label>${t('Username')} <input name="username" autocomplete="username" required /></label>
      <label>${t('Password')} <input name="password" type="password" autocomplete="current-password" required /></label>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <button type="submit" disabled=${busy}>${busy ? t('Signing in…') : t('Sign in')}</button>
    </form>
    <${LanguagePicker} />
  </main>`
}

/** The current hash route, kept in step with the address bar. */
function useRoute() {
  const [hash, setHash] = useState(location.hash || '#/')
  useEffect(() => {
    const follow = () => setHash(location.hash || '#/')
    addEventListener('hashchange', follow)
    return () => removeEventListener('hashchange', follow)
  }, [])
  return hash
}

const navigate = (hash) => {
  location.hash = hash
}

/** The sections of the app's addresses, and what an id in them looks like. */
const ROUTED = new Set(['dashboard', 'chart', 'data', 'quality', 'entry', 'catalog', 'upload', 'admin', 'account'])
const isId = (text) => /^[1-9][0-9]{0,9}$/.test(text ?? '')

/** What an address naming no page shows (an unknown section, an id that is not one). */
const NotFound = ({ hash }) => html`<h1>${t('Page not found')}</h1>
  <p>${t('No page of the app has the address {address}.', { address: hash })}</p>
  <p><a href="#/">${t('Back to the dashboards')}</a></p>`

/** The page of a route: [title, view]. */
function page(hash, user, catalog, reloadCatalog) {
  const { parts, params } = parseRoute(hash)
  const [section, id, action, extra] = parts
  const badId = (section === 'dashboard' && id && !isId(id)) || (section === 'chart' && id && id !== 'new' && !isId(id))
  if ((section && !ROUTED.has(section)) || badId) return [t('Page not found'), html`<${NotFound} hash=${hash} />`]
  if (section === 'dashboard' && id && action === 'edit')
    return [t('Edit dashboard'), html`<${DashboardEditor} key=${id} id=${id} user=${user} navigate=${navigate} />`]
  if (section === 'dashboard' && id)
    return [t('Dashboard'), html`<${DashboardView} key=${id} id=${id} catalog=${catalog} user=${user} params=${params} navigate=${navigate} />`]
  if (section === 'chart' && id === 'new')
    return [t('New chart'), html`<${ChartBuilder} key="new" dashboardId=${action} catalog=${catalog} user=${user} navigate=${navigate} />`]
  if (section === 'chart' && id)
    return [t('Edit chart'), html`<${ChartBuilder} key=${id} chartId=${id} dashboardId=${extra} catalog=${catalog} user=${user} navigate=${navigate} />`]
  if (section === 'data') return [t('Data'), html`<${DataBrowser} catalog=${catalog} />`]
  if (section === 'quality')
    return [t('Data quality'), html`<${DataQuality} catalog=${catalog} params=${params} navigate=${navigate} mayEditRanges=${mayEditCatalog(user)} />`]
  if (section === 'entry') return [t('Data entry'), html`<${DataEntry} catalog=${catalog} params=${params} />`]
  if (section === 'catalog' && mayEditCatalog(user))
    return [t('Catalog'), html`<${Catalog} catalog=${catalog} user=${user} section=${id} onCatalogChange=${reloadCatalog} />`]
  if (section === 'upload') return [t('Upload'), html`<${Upload} catalog=${catalog} user=${user} documentId=${id} jobId=${params.job} />`]
  if (section === 'admin' && user.is_superuser) return [t('Administration'), html`<${Admin} catalog=${catalog} user=${user} />`]
  if (section === 'account') return [t('Your account'), html`<${Account} user=${user} />`]
  return [t('Dashboards'), html`<${DashboardList} navigate=${navigate} />`]
}

/** Focuses the page's h1 once it is drawn (a page may still be loading what its heading says). */
function focusHeading() {
  let tries = 0
  const attempt = () => {
    const heading = document.querySelector('main h1')
    if (heading instanceof HTMLElement) {
      heading.tabIndex = -1
      heading.focus({ preventScroll: true })
    } else if (tries++ < 40) setTimeout(attempt, 25)
  }
  attempt()
}

/** @type {Array<[string, () => string]>} */
const SECTIONS = [
  ['#/', () => t('Dashboards')],
  ['#/data', () => t('Data')],
  ['#/quality', () => t('Data quality')],
  ['#/upload', () => t('Upload')],
  ['#/entry', () => t('Data entry')],
]

/** Who manages indicators, campaigns and locations in the app: superusers and metadata editors. */
const mayEditCatalog = (user) => Boolean(user.is_superuser || user.metadata_editor)

/** How long the sign-out waits on sending what waits before it asks: a stalled network leaves her the choice. */
const SIGN_OUT_SENDING_MS = 10_000

/** The outbox sent, for at most SIGN_OUT_SENDING_MS (the sending goes on; the dialog's count follows it). */
const sentFirst = () => Promise.race([flush(() => {}), new Promise((resolve) => setTimeout(resolve, SIGN_OUT_SENDING_MS))])

/**
 * Signing out, with what the outbox still holds of this user's typed values: she is told, and sends them
 * first or discards them (never left for the next person on this browser, who could not send them
 * anyway: web/outbox.js). `leaving`: the count shown while she chooses.
 */
function useSignOut(onSignedOut) {
  const [leaving, setLeaving] = useState(null)
  const [problem, setProblem] = useState('')
  const [allSent, setAllSent] = useState(false)
  // While a step of the sign-out works (values on their way into the outbox, sent first, the session
  // ended): said on its buttons, which a second press cannot start again.
  const [busy, setBusy] = useState(false)
  const working = useRef(false)
  /** @param {() => Promise<unknown>} step */
  const oneAtATime = (step) => async () => {
    if (working.current) return
    working.current = true
    setBusy(true)
    try {
      await step()
    } finally {
      working.current = false
      setBusy(false)
    }
  }
  // While she chooses, the count follows the outbox: the data entry page sends what waits as soon as
  // the network is back, and a dialog still saying "1 value has not reached the server" would have her
  // discard a value the server holds.
  useEffect(() => {
    if (!leaving) return
    const recount = async () => {
      const queued = (await entries()).length
      if (queued) return setLeaving(queued)
      setLeaving(null)
      setProblem('')
      setAllSent(true)
    }
    const every = setInterval(recount, 1000)
    addEventListener('online', recount)
    return () => {
      clearInterval(every)
      removeEventListener('online', recount)
    }
  }, [Boolean(leaving)])
  /** @param {string} [offline] what to say when the session cannot be ended for want of a network */
  const signOutNow = async (offline = t('No network: sign out once it is back.')) => {
    const res = await api('DELETE', '/session/').catch(() => null)
    if (!res) return setProblem(offline)
    await bindOutbox(null)
    await forgetOffline()
    onSignedOut()
  }
  const signOut = oneAtATime(async () => {
    setProblem('')
    setAllSent(false)
    // A value committed by leaving its cell for this button is on its way into the outbox: counted too.
    await settled()
    // Online, what waits is sent first: asked only about what could not be.
    if (navigator.onLine && (await entries()).length) await sentFirst()
    const queued = (await entries()).length
    if (queued) return setLeaving(queued)
    await signOutNow()
  })
  const sendFirst = oneAtATime(async () => {
    // Without a network nothing can be sent, nor the session ended: said at once, nothing tried.
    if (!navigator.onLine) return setProblem(t('No network: the values wait on this browser. Send them once it is back.'))
    await sentFirst()
    const queued = (await entries()).length
    if (queued) {
      setLeaving(queued)
      return setProblem(t('Some values could not be sent (no network, or a conflict to settle on the data entry page).'))
    }
    setLeaving(null)
    await signOutNow()
  })
  // Her choice holds offline too: the values go now, and the session, which only the server can end,
  // once the network is back; she is told both, so that nothing reads as sent.
  const discard = oneAtATime(async () => {
    await discardMine()
    setLeaving(null)
    await signOutNow(t('Your values were discarded. No network: sign out once it is back.'))
  })
  const dialog =
    leaving &&
    html`<section class="sign-out-queued" role="alertdialog" aria-labelledby="queued-title">
      <h2 id="queued-title">${tn(leaving, '{n} value you typed has not reached the server', '{n} values you typed have not reached the server')}</h2>
      <p>${t('Once you sign out, nobody else on this browser can send them. Send them first, or discard them.')}</p>
      ${problem && html`<p class="error" role="alert">${problem}</p>`}
      <button onClick=${sendFirst} disabled=${busy}>${t('Send them, then sign out')}</button>
      <button class="secondary" onClick=${discard} disabled=${busy}>${t('Discard them and sign out')}</button>
      <button class="secondary" onClick=${() => setLeaving(null)}>${t('Stay signed in')}</button>
    </section>`
  const sent = allSent && !leaving && html`<p class="sign-out-note" role="status">${t('Every value you typed has reached the server: you may sign out.')}</p>`
  return { signOut, busy, dialog: dialog || sent, problem: leaving ? '' : problem }
}

function Shell({ user, onSignedOut }) {
  const hash = useRoute()
  const [catalog, setCatalog] = useState(null)
  const [error, setError] = useState('')
  useEffect(() => {
    loadCatalog().then(setCatalog, (e) => setError(e.message))
  }, [user.id])
  const { signOut, busy: signingOut, dialog, problem } = useSignOut(onSignedOut)
  const reloadCatalog = () => loadCatalog().then(setCatalog)
  const [title, view] = catalog ? page(hash, user, catalog, reloadCatalog) : [t('Loading'), html`<p>${error || t('Loading…')}</p>`]
  useEffect(() => {
    document.title = `${title} · rhizome`
  }, [title])
  // A new page (not a new view of the same one) moves focus to its heading, as a page load would.
  const { path } = parseRoute(hash)
  useEffect(() => focusHeading(), [path, Boolean(catalog)])
  const sections = [...SECTIONS]
  if (mayEditCatalog(user)) sections.push(['#/catalog', () => t('Catalog')])
  if (user.is_superuser) sections.push(['#/admin', () => t('Administration')])
  const current = (target) => (target === '#/' ? !/^#\/(data|quality|upload|entry|catalog|admin|account)/.test(hash) : hash.startsWith(target))
  return html`<a class="skip" href="#content" onClick=${(e) => {
    e.preventDefault()
    document.getElementById('content')?.focus()
  }}>${t('Skip to content')}</a>
    <header class="app-header">
      <strong class="brand">rhizome</strong>
      <nav aria-label=${t('Main')}>
        ${sections.map(([target, label]) => html`<a key=${target} href=${target} aria-current=${current(target) ? 'page' : undefined}>${label()}</a>`)}
      </nav>
      <p class="who"><span class="narrow-hidden">${t('Signed in as')}</span> <strong>${user.username}</strong>${user.offline ? html` <span class="offline-note">${t('(offline)')}</span>` : ''} <a href="#/account" aria-current=${hash.startsWith('#/account') ? 'page' : undefined}>${t('Account')}</a> <button class="secondary" onClick=${signOut} disabled=${signingOut} aria-busy=${signingOut ? 'true' : undefined}>${signingOut ? t('Signing out…') : t('Sign out')}</button> <${LanguagePicker} /></p>
    </header>
    ${dialog}${problem && html`<p class="error" role="alert">${problem}</p>`}
    <main id="content" tabindex="-1">${view}</main>`
}

/**
 * Who is signed in: the server's answer, remembered for a reload without a network (web/offline.js);
 * without a network, the user remembered while her session may still be alive, else nobody. The
 * outbox is bound to that user (web/outbox.js).
 */
async function whoIsSignedIn() {
  const res = await api('GET', '/session/').catch(() => null)
  // Only 204 says nobody is signed in; no answer, or a server that cannot tell now (502, 503, 429), is as offline.
  if (!res || (res.status !== 200 && res.status !== 204 && res.status !== 401)) {
    const remembered = signedInOffline()
    if (!remembered) await forgetOffline()
    await bindOutbox(remembered)
    return remembered && { ...remembered, offline: true }
  }
  const user = res.status === 200 ? res.body : null
  await signedInNow(user)
  await bindOutbox(user)
  return user
}

/** How often a page online asks the server again, so what is remembered of the session stays near its end. */
const SESSION_CHECK_MS = 5 * 60_000

function App() {
  const [user, setUser] = useState(undefined)
  const hash = useRoute()
  const check = () => whoIsSignedIn().then(setUser)
  useEffect(() => {
    check()
    const again = setInterval(() => navigator.onLine && check(), SESSION_CHECK_MS)
    // Another tab signed someone else in, or signed out: this one asks again at once (web/offline.js
    // keeps who is signed in). Only a change of person counts: each tab's own check rewrites the record.
    const idIn = (text) => JSON.parse(text ?? 'null')?.user?.id ?? null
    const otherTab = (event) => event.key === SIGNED_IN_ITEM && idIn(event.oldValue) !== idIn(event.newValue) && check()
    addEventListener('storage', otherTab)
    // Back online: the server is asked at once, and "(offline)" goes as soon as it answers.
    addEventListener('online', check)
    return () => {
      clearInterval(again)
      removeEventListener('storage', otherTab)
      removeEventListener('online', check)
    }
  }, [])
  const signedIn = async (answer) => {
    await signedInNow(answer)
    await bindOutbox(answer)
    setUser(answer)
  }
  // A reset link's page works signed in or not: it sets the password of the user it was made for.
  const { parts, params } = parseRoute(hash)
  if (parts[0] === 'reset' && parts[1]) {
    return html`<${ResetPassword} token=${parts[1]} onDone=${() => {
      location.hash = '#/'
      check()
    }} />`
  }
  // A shared link's dashboard is for anyone holding the link, signed in or not.
  if (parts[0] === 'shared' && parts[1]) return html`<${SharedDashboard} key=${parts[1]} token=${parts[1]} params=${params} />`
  if (user === undefined) return html`<main id="content"><p>${t('Loading…')}</p></main>`
  return user ? html`<${Shell} user=${user} onSignedOut=${() => setUser(null)} />` : html`<${SignIn} onSignedIn=${signedIn} />`
}

document.documentElement.lang = language()
const root = document.getElementById('app')
root.textContent = ''
render(html`<${App} />`, root)
