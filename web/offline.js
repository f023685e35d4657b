// The page's side of the service worker (web/sw.js) and of a session on a shared browser: registering
// the worker, handing it what was loaded before it took over, telling it who is signed in (it keeps and
// answers that user's reads only), and remembering, for a reload without a network, who was signed in
// and until when her session lasts unused. Past that, or once the server says nobody is signed in,
// the page shows nothing of hers.
/** Where who is signed in is remembered (local storage: every tab of the app sees it change). */
export const SIGNED_IN_ITEM = 'rhizome-signed-in'
const SIGNED_IN = SIGNED_IN_ITEM

/** Sends `message` to the active worker and waits for its answer (undefined without a worker). */
async function tellWorker(message) {
  const registration = await navigator.serviceWorker?.getRegistration('/app/')
  const active = registration?.active
  if (!active) return undefined
  const channel = new MessageChannel()
  const answered = new Promise((resolve) => {
    channel.port1.onmessage = (event) => resolve(event.data)
  })
  active.postMessage(message, [channel.port2])
  return answered
}

/**
 * Registers the worker; once it runs, hands it every app file and API read this page has made so far,
 * and `paths`: the reads a view needs named by it, since a read whose body was not consumed (only its
 * headers were) may not be among the page's resource timings yet. Resolves true once the worker has
 * kept them (a reload then works without a network), false without a worker.
 * @param {string[]} [paths]
 * @returns {Promise<boolean>}
 */
export async function keepForOffline(paths = []) {
  if (!navigator.serviceWorker) return false
  await navigator.serviceWorker.register('/app/sw.js', { scope: '/app/' }).catch(() => null)
  const registration = await navigator.serviceWorker.ready
  if (!registration.active) return false
  // A worker registered just now learns who is signed in before it keeps anything.
  await tellWorker(whoMessage())
  const loaded = [...performance.getEntriesByType('resource').map((e) => e.name), ...paths.map((p) => new URL(p, location.href).href)]
  await tellWorker({ keep: [new URL('/app/', location.href).href, ...new Set(loaded)] })
  return true
}

/**
 * The server said who is signed in (`null`: nobody): remembered with the end of her session if unused
 * (`session_expires_in_s`), and told to the worker, which forgets every other user's reads.
 * @param {any} user
 */
export async function signedInNow(user) {
  if (user) {
    const { outbox_key: _key, ...shown } = user
    const until = Date.now() + (user.session_expires_in_s ?? 0) * 1000
    localStorage.setItem(SIGNED_IN, JSON.stringify({ user: shown, until }))
  } else localStorage.removeItem(SIGNED_IN)
  await tellWorker(whoMessage())
}

/** What the worker is told of who is signed in. */
function whoMessage() {
  const kept = JSON.parse(localStorage.getItem(SIGNED_IN) ?? 'null')
  return kept && kept.until > Date.now() ? { who: kept.user.id, until: kept.until } : { who: null, until: 0 }
}

/** Who was signed in, for a page without a network: while her session may still be alive, else nobody. */
export function signedInOffline() {
  const kept = JSON.parse(localStorage.getItem(SIGNED_IN) ?? 'null')
  if (kept && kept.until > Date.now()) return kept.user
  if (kept) localStorage.removeItem(SIGNED_IN)
  return null
}

/** Forgets who was signed in and every read kept (at sign-out, or a session found ended). */
export const forgetOffline = () => signedInNow(null)
