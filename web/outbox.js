// The values typed on the data-entry page wait here, in IndexedDB, until the server has them: every
// write goes through it, online or not, so a cut network, a reload or a restarted server loses none.
// They leave in the order they were typed, one at a time, each with its own Idempotency-Key (a resend
// after a lost answer writes nothing twice) and, for a value that existed when the form was loaded,
// the If-Match of the version it was typed over (changed since: 412, kept as a conflict for the
// person to settle, never overwritten). docs/decisions.md, "Retried writes".

const DATABASE = 'rhizome-entry'
const STORE = 'outbox'

/** @returns {Promise<IDBDatabase>} */
function open() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1)
    request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: 'seq', autoIncrement: true })
    request.onsuccess = () => resolve(request.result)
    request.onerror = () => reject(request.error)
  })
}

/** Runs `work` on the store in one transaction; resolves with its request's result once committed. */
async function inStore(mode, work) {
  const db = await open()
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(STORE, mode)
    const request = work(transaction.objectStore(STORE))
    transaction.oncomplete = () => {
      db.close()
      resolve(request?.result)
    }
    transaction.onerror = () => reject(transaction.error)
  })
}

/** Every entry, in the order typed. @returns {Promise<Array<any>>} */
export const entries = () => inStore('readonly', (store) => store.getAll())

/** The cell an entry writes: resource, location, indicator, campaign or day. */
export const cellKey = (e) => `${e.resource}:${e.location_id}:${e.indicator_id}:${e.campaign_id ?? e.data_date}`

/**
 * Keeps a typed value to be sent: `entry` holds the resource, the key fields, the value, and the row
 * it changes with that row's ETag (none: a new value).
 */
export function enqueue(entry) {
  return inStore('readwrite', (store) => store.add({ ...entry, key: crypto.randomUUID(), state: 'waiting' }))
}

const put = (entry) => inStore('readwrite', (store) => store.put(entry))
const remove = (seq) => inStore('readwrite', (store) => store.delete(seq))

/** Forgets the entries of a cell that are not waiting (a settled conflict or refusal). @param {string} cell */
export async function forget(cell) {
  for (const e of await entries()) if (cellKey(e) === cell && e.state !== 'waiting') await remove(e.seq)
}

/**
 * The request of an entry: a PATCH of its row with If-Match, else a POST.
 * @returns {[string, RequestInit]}
 */
function requestOf(entry) {
  const headers = { 'content-type': 'application/json', 'idempotency-key': `"${entry.key}"` }
  const keyFields = entry.campaign_id != null ? { campaign_id: entry.campaign_id } : { data_date: entry.data_date }
  if (entry.row_id != null) {
    return [
      `/api/v1/${entry.resource}/${entry.row_id}/`,
      { method: 'PATCH', headers: { ...headers, 'if-match': entry.etag }, body: JSON.stringify({ value: entry.value }) },
    ]
  }
  const body = { indicator_id: entry.indicator_id, location_id: entry.location_id, ...keyFields, value: entry.value }
  return [`/api/v1/${entry.resource}/`, { method: 'POST', headers, body: JSON.stringify(body) }]
}

let flushing = null

/**
 * Sends the waiting entries in order, one at a time; stops at the first that cannot reach the server
 * (no network, a server restarting: 502–504) and leaves it and the rest for the next call. Each answer
 * goes to `onAnswer(entry, status, body, etag)`. One flush at a time: a second call joins the first.
 * @param {(entry: any, status: number, body: any, etag: string | null) => void} onAnswer
 */
export function flush(onAnswer) {
  flushing ??= sendWaiting(onAnswer).finally(() => {
    flushing = null
  })
  return flushing
}

async function sendWaiting(onAnswer) {
  for (;;) {
    const entry = (await entries()).find((e) => e.state === 'waiting')
    if (!entry) return true
    let response
    try {
      response = await fetch(...requestOf(entry))
    } catch {
      return false
    }
    // Not signed in any more, or the server not answering yet: tried again later, in the same order.
    if (response.status === 401 || (response.status >= 502 && response.status <= 504)) return false
    const body = await response.json().catch(() => null)
    const etag = response.headers.get('etag')
    if (response.ok) {
      await remove(entry.seq)
      // A later value of the same cell changes the row this one wrote, at its new version.
      for (const later of await entries()) {
        if (later.state === 'waiting' && cellKey(later) === cellKey(entry)) await put({ ...later, row_id: body.id, etag })
      }
    } else {
      const conflict = response.status === 412 || (response.status === 409 && body?.code === 'UNIQUE_VIOLATION')
      await put({
        ...entry,
        state: conflict ? 'conflict' : 'refused',
        message: body?.message ?? String(response.status),
        current: body?.details?.current ?? null,
      })
    }
    onAnswer(entry, response.status, body, etag)
  }
}
