// The page's side of the service worker (web/sw.js): registering it, handing it what was loaded
// before it took over, and forgetting what it kept when the reader signs out (the next one on this
// browser must not be shown her reads).
const CACHE = 'rhizome-offline'

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
  const loaded = [...performance.getEntriesByType('resource').map((e) => e.name), ...paths.map((p) => new URL(p, location.href).href)]
  const channel = new MessageChannel()
  const kept = new Promise((resolve) => {
    channel.port1.onmessage = () => resolve(true)
  })
  if (!registration.active) return false
  registration.active.postMessage({ keep: [new URL('/app/', location.href).href, ...new Set(loaded)] }, [channel.port2])
  return /** @type {Promise<boolean>} */ (kept)
}

/** Forgets the kept reads (at sign-out). */
export const forgetOffline = () => globalThis.caches?.delete(CACHE)
