// Hash routes with their view in the address: `#/dashboard/5?campaign=3&location=12`, so that a reload,
// back and forward, and a copied link show the same view.

/**
 * @param {string} hash
 * @returns {{ path: string, parts: string[], params: Record<string, string> }}
 */
export function parseRoute(hash) {
  const [path, search = ''] = hash.replace(/^#\/?/, '').split('?')
  return { path: `#/${path}`, parts: path.split('/').filter(Boolean), params: Object.fromEntries(new URLSearchParams(search)) }
}

/**
 * A route's hash with the given parameters (undefined, null and '' left out).
 * @param {string} path
 * @param {Record<string, string | number | null | undefined>} [params]
 */
export function routeHash(path, params = {}) {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value))
  const text = search.toString()
  return text ? `${path}?${text}` : path
}
