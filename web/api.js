// The public API, called with the session cookie. A change carries this page's Origin, which the server
// checks (SECURITY.md); nothing here is allowed that an API consumer could not do.
import { refusalText } from './api-messages.js'
import { fold } from './format.js'
import { boundsById } from './status.js'

/** One call: `{status, body}`, the body parsed when there is one. */
export async function api(method, path, body) {
  const isForm = body instanceof FormData
  const response = await fetch(`/api/v1${path}`, {
    method,
    credentials: 'same-origin',
    headers: body === undefined || isForm ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
  })
  const text = await response.text()
  let parsed = null
  try {
    parsed = text ? JSON.parse(text) : null
  } catch {
    parsed = { message: text }
  }
  return { status: response.status, body: parsed }
}

/** An answer of the API that is not a success: its message, status and code (`UNIQUE_VIOLATION`…). */
export class ApiFailure extends Error {
  /** @param {string} message @param {number} status @param {string} [code] */
  constructor(message, status, code) {
    super(message)
    this.status = status
    this.code = code
  }
}

const failure = (res, what) => new ApiFailure(refusalText(res.body, `${what}: ${res.status}`), res.status, res.body?.code)

/** A list's objects, or an ApiFailure. */
export async function list(path) {
  const res = await api('GET', path)
  if (res.status !== 200) throw failure(res, path)
  return res.body.objects
}

/** A change that must succeed: its answer, or an ApiFailure. */
export async function change(method, path, body) {
  const res = await api(method, path, body)
  if (res.status >= 400) throw failure(res, `${method} ${path}`)
  return res.body
}

/** Whether the signed-in user may change a row that has an owner: its owner, a superuser or a metadata editor. */
export const mayChange = (user, row) => Boolean(user.is_superuser || user.metadata_editor || (row.owner_id != null && row.owner_id === user.id))

/**
 * A title no other row of a resource has (titles are unique across all users): `wanted`, else
 * "wanted (2)", "wanted (3)"… the first one free.
 * @param {string} resource @param {string} wanted
 */
export async function freeTitle(resource, wanted) {
  const base = wanted.replace(/ \(\d+\)$/, '')
  // One read: every title starting with the wanted one.
  const taken = new Set((await list(`/${resource}/${query({ title__startswith: base, fields: 'title', limit: 0 })}`)).map((r) => r.title))
  let n = 1
  while (taken.has(n === 1 ? base : `${base} (${n})`)) n++
  return n === 1 ? base : `${base} (${n})`
}

/** A query string of the defined, non-empty parameters; arrays become comma lists. */
export function query(params) {
  const parts = []
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue
    const text = Array.isArray(value) ? value.join(',') : String(value)
    if (text !== '') parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(text)}`)
  }
  return parts.length ? `?${parts.join('&')}` : ''
}

/** The reads a catalog is made of (the same for the app and the server's exports), by name. */
export const CATALOG_READS = {
  indicators: '/indicator/?fields=id,short_name,name,data_format,resource_name,good_bound,bad_bound,bound_json,coverage_threshold&limit=0&order_by=short_name',
  campaigns: '/campaign/?fields=id,name,start_date,end_date,campaign_type_id&limit=0&order_by=start_date',
  locations: '/location/?fields=id,name,parent_location_id,location_type_id,location_code&limit=0',
  types: '/location_type/?limit=0',
  campaignTypes: '/campaign_type/?limit=0',
}

/**
 * Names the app shows beside ids: indicators, campaigns and the locations this user may see (the API
 * filters those for a restricted user). Read once per sign-in; `refresh()` after a change.
 */
export async function loadCatalog() {
  const names = Object.keys(CATALOG_READS)
  const lists = await Promise.all(names.map((name) => list(CATALOG_READS[name])))
  return catalogOf(/** @type {any} */ (Object.fromEntries(names.map((name, i) => [name, lists[i]]))))
}

/**
 * The catalog of the lists of CATALOG_READS.
 * @param {Record<keyof typeof CATALOG_READS, Array<any>>} lists
 */
export function catalogOf({ indicators, campaigns, locations, types, campaignTypes }) {
  const visible = new Set(locations.map((l) => l.id))
  let searchIndex = null
  let childTypes = null
  let parents = null
  const typeName = new Map(types.map((t) => [t.id, t.name]))
  const byId = new Map(locations.map((l) => [l.id, l]))
  return {
    indicators,
    campaigns,
    locations,
    types,
    indicatorName: new Map(indicators.map((i) => [i.id, i.short_name])),
    /** Indicators of campaign data first: the natural first choice of a campaign read. */
    campaignIndicators: indicators.filter((i) => i.resource_name !== 'date'),
    indicatorFormat: new Map(indicators.map((i) => [i.id, i.data_format])),
    /** The bounds of the indicators that have any (web/status.js). */
    indicatorBounds: boundsById(indicators),
    campaignName: new Map(campaigns.map((c) => [c.id, c.name])),
    campaignTypeName: new Map(campaignTypes.map((c) => [c.id, c.name])),
    locationName: new Map(locations.map((l) => [l.id, l.name])),
    /** The visible locations whose parent is not visible: the whole tree, or a restricted user's subtree. */
    roots: locations.filter((l) => !visible.has(l.parent_location_id)),
    /** A location's name with its visible ancestors: "Veridia › Eastvale › Ashford". */
    lineageOf(id) {
      return this.pathTo(id)
        .map((l) => l.name)
        .join(' › ')
    },
    /** What the location search looks through: each location's lineage and its folded name, built once. */
    get searchIndex() {
      searchIndex ??= locations.map((l) => ({ id: l.id, key: fold(l.name), lineage: this.lineageOf(l.id) })).sort((a, b) => a.lineage.localeCompare(b.lineage))
      return searchIndex
    },
    /** The type name of a location's children ("District"), when it has visible ones. */
    childTypeOf(id) {
      childTypes ??= new Map(locations.filter((l) => l.parent_location_id != null).map((l) => [l.parent_location_id, typeName.get(l.location_type_id)]))
      return childTypes.get(id)
    },
    /** Whether a location has visible children: a drill-down stops at one that has none. */
    hasChildren(id) {
      parents ??= new Set(locations.map((l) => l.parent_location_id))
      return parents.has(id)
    },
    /** Ancestors of a location, nearest last, among the visible ones. */
    pathTo(id) {
      const path = []
      for (let at = byId.get(id); at; at = byId.get(at.parent_location_id)) path.unshift(at)
      return path
    },
  }
}
