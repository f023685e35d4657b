// The service worker of the data-entry page (registered there, web/offline.js): the app's files and
// the API reads it made are kept in the Cache Storage, and when the network fails a GET is answered
// from there, so the page reloads and shows its form without a network. Always the network first: a
// reader online sees what the server says now. Writes never come here: web/outbox.js keeps them.
//
// A browser is shared: API reads are kept per user (`rhizome-api:<id>`) and answered only for the user
// the page last said is signed in (`who`, told by web/offline.js after the server said so, or while
// her session may still be alive offline). When another signs in, the others' reads are deleted; when
// nobody is signed in, none is answered from the cache and all are deleted. Who is signed in is never
// answered from the cache (`/api/v1/session/` passes by).
const APP_FILES = 'rhizome-app'
const API_READS = 'rhizome-api:'
const WHO = 'rhizome-who'
const WHO_URL = '/app/__who'
/** @type {any} The worker's global scope (web/tsconfig.json types the page's). */
const worker = self

const isApi = (url) => url.pathname.startsWith('/api/v1/')
/** The requests kept: GETs of this origin, the app's files and the API's reads, but who is signed in. */
const kept = (url) =>
  url.origin === worker.location.origin && (url.pathname.startsWith('/app/') || (isApi(url) && !url.pathname.startsWith('/api/v1/session/')))

/** The user whose reads are kept and answered now: null for nobody, or once her session has surely ended. @returns {Promise<number | null>} */
async function who() {
  const held = await (await caches.open(WHO)).match(WHO_URL)
  const { id, until } = held ? await held.json() : { id: null, until: 0 }
  return until > Date.now() ? id : null
}

/** Records who is signed in and until when at most; deletes every other user's reads (all of them for nobody). */
async function setWho(id, until) {
  await (await caches.open(WHO)).put(WHO_URL, new Response(JSON.stringify({ id, until })))
  for (const name of await caches.keys()) if (name.startsWith(API_READS) && name !== `${API_READS}${id}`) await caches.delete(name)
}

/** The cache a request's answer goes to and comes from; null: an API read while nobody is signed in. */
async function cacheOf(url) {
  if (!isApi(url)) return caches.open(APP_FILES)
  const id = await who()
  return id === null ? null : caches.open(`${API_READS}${id}`)
}

worker.addEventListener('install', () => worker.skipWaiting())
worker.addEventListener('activate', (/** @type {any} */ event) =>
  // The single cache of earlier versions held every user's reads together.
  event.waitUntil(Promise.all([caches.delete('rhizome-offline'), worker.clients.claim()])),
)

async function networkFirst(request) {
  const url = new URL(request.url)
  try {
    // Kept only if who is signed in did not change while it was fetched (the answer was made for them).
    const before = isApi(url) ? await who() : null
    const response = await fetch(request)
    const cache = response.ok && (!isApi(url) || (await who()) === before) ? await cacheOf(url) : null
    if (cache) await cache.put(request, response.clone())
    return response
  } catch (error) {
    const held = await (await cacheOf(url))?.match(request, { ignoreVary: true })
    if (held) return held
    throw error
  }
}

worker.addEventListener('fetch', (/** @type {any} */ event) => {
  const url = new URL(event.request.url)
  if (event.request.method !== 'GET' || !kept(url)) return
  event.respondWith(networkFirst(event.request))
})

// From the page: `{who: id | null, until}`, who is signed in now and until when her session lasts unused; `{keep: [urls]}`, what it loaded before this
// worker took it over (its modules, its first reads), fetched again and kept. Each is answered on the
// port it sent once done (`kept`: how many of the urls are kept).
worker.addEventListener('message', (/** @type {any} */ event) => {
  const reply = (message) => event.ports[0]?.postMessage(message)
  if (event.data && 'who' in event.data) return event.waitUntil(setWho(event.data.who, event.data.until ?? 0).then(() => reply({ who: event.data.who })))
  const urls = (event.data?.keep ?? []).filter((u) => kept(new URL(u)))
  event.waitUntil(
    Promise.all(
      urls.map(async (u) => {
        const held = await (await cacheOf(new URL(u)))?.match(u, { ignoreVary: true })
        return held ?? networkFirst(new Request(u, { credentials: 'same-origin' })).catch(() => null)
      }),
    ).then((held) => reply({ kept: held.filter(Boolean).length, of: urls.length })),
  )
})
