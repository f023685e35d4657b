// The service worker of the data-entry page (registered there, web/offline.js): the app's files and
// the API reads it made are kept in the Cache Storage, and when the network fails a GET is answered
// from there, so the page reloads and shows its form without a network. Always the network first: a
// reader online sees what the server says now. Writes never come here: web/outbox.js keeps them.
const CACHE = 'rhizome-offline'
/** @type {any} The worker's global scope (web/tsconfig.json types the page's). */
const worker = self

/** The requests kept: GETs of this origin, the app's files and the API's reads. */
const kept = (url) => url.origin === worker.location.origin && (url.pathname.startsWith('/app/') || url.pathname.startsWith('/api/v1/'))

worker.addEventListener('install', () => worker.skipWaiting())
worker.addEventListener('activate', (/** @type {any} */ event) => event.waitUntil(worker.clients.claim()))

async function networkFirst(request) {
  const cache = await caches.open(CACHE)
  try {
    const response = await fetch(request)
    if (response.ok) await cache.put(request, response.clone())
    return response
  } catch (error) {
    const held = await cache.match(request, { ignoreVary: true })
    if (held) return held
    throw error
  }
}

worker.addEventListener('fetch', (/** @type {any} */ event) => {
  const url = new URL(event.request.url)
  if (event.request.method !== 'GET' || !kept(url)) return
  event.respondWith(networkFirst(event.request))
})

// What the page loaded before this worker took it over (its modules, its first reads): fetched again and
// kept; the page is told on the port it sent how many are kept.
worker.addEventListener('message', (/** @type {any} */ event) => {
  const urls = (event.data?.keep ?? []).filter((u) => kept(new URL(u)))
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) =>
        Promise.all(
          urls.map(async (u) => (await cache.match(u, { ignoreVary: true })) ?? networkFirst(new Request(u, { credentials: 'same-origin' })).catch(() => null)),
        ),
      )
      .then((held) => event.ports[0]?.postMessage({ kept: held.filter(Boolean).length, of: urls.length })),
  )
})
