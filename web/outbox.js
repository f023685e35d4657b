// The values typed on the data-entry page wait here, in IndexedDB, until the server has them: every
// write goes through it, online or not, so a cut network, a reload or a restarted server loses none.
// They leave in the order they were typed, one at a time, each with its own Idempotency-Key (a resend
// after a lost answer writes nothing twice) and, for a value that existed when the form was loaded,
// the If-Match of the version it was typed over (changed since: 412, kept as a conflict for the
// person to settle, never overwritten). docs/decisions.md, "Retried writes".
//
// A browser is shared (docs/decisions.md, "A shared browser"): each entry belongs to the user who
// typed it and is sealed with her outbox key (an HMAC the server derives for her alone, given with her
// session and kept only in this tab's memory and session storage). The page sees and sends only the
// entries of the user signed in whose seal holds: one person's values are never sent under another's
// session, and an entry written into the store by hand (without the key) is never sent at all.

import { t } from './i18n.js'
import { refusalText } from './api-messages.js'

const DATABASE = 'rhizome-entry'
const STORE = 'outbox'
const KEY_ITEM = 'rhizome-outbox-key'

/** The signed-in user's id and HMAC key, once bound. @type {{ userId: number, key: CryptoKey } | null} */
let owner = null

const hexBytes = (hex) => new Uint8Array(hex.match(/../g).map((b) => parseInt(b, 16)))

/**
 * Binds the outbox to the user signed in: `user.outbox_key` from her session's answer, or (a reload
 * without a network) the one this tab kept for the same user. Without a key, nothing can be queued
 * or sent. `null`: signed out, the key forgotten.
 * @param {{ id: number, outbox_key?: string } | null} user
 */
export async function bindOutbox(user) {
  verified.clear()
  if (!user) {
    owner = null
    return sessionStorage.removeItem(KEY_ITEM)
  }
  let hex = user.outbox_key
  const kept = JSON.parse(sessionStorage.getItem(KEY_ITEM) ?? 'null')
  if (hex) sessionStorage.setItem(KEY_ITEM, JSON.stringify({ userId: user.id, hex }))
  else if (kept?.userId === user.id) hex = kept.hex
  else sessionStorage.removeItem(KEY_ITEM)
  // The new owner is set once, whole: never a moment without one while the key is imported.
  owner =
    hex && globalThis.crypto?.subtle
      ? { userId: user.id, key: await crypto.subtle.importKey('raw', hexBytes(hex), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']) }
      : null
}

/** Whether values can be queued now: a user is bound with her key. */
export const outboxReady = () => owner !== null

/** What a seal covers: who typed it, where it goes, what it writes and over which version. */
const sealedText = (e) =>
  JSON.stringify([
    e.user_id,
    e.key,
    e.resource,
    e.location_id,
    e.indicator_id,
    e.campaign_id ?? null,
    e.data_date ?? null,
    e.value,
    e.row_id ?? null,
    e.etag ?? null,
  ])

async function sealed(entry) {
  const signature = await crypto.subtle.sign('HMAC', owner.key, new TextEncoder().encode(sealedText(entry)))
  return { ...entry, seal: [...new Uint8Array(signature)].map((b) => b.toString(16).padStart(2, '0')).join('') }
}

/** The seals already found to hold for the bound user, by entry: each entry is verified once. */
const verified = new Map()

/** Whether an entry is the bound user's and its seal holds. */
async function isMine(entry) {
  if (!owner || entry.user_id !== owner.userId || typeof entry.seal !== 'string' || !/^([0-9a-f]{2})+$/.test(entry.seal)) return false
  if (verified.get(entry.seq) === entry.seal) return true
  const holds = await crypto.subtle.verify('HMAC', owner.key, hexBytes(entry.seal), new TextEncoder().encode(sealedText(entry)))
  if (holds) verified.set(entry.seq, entry.seal)
  return holds
}

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

const everyEntry = () => inStore('readonly', (store) => store.getAll())

/** The signed-in user's entries, in the order typed (nobody's without a bound user). @returns {Promise<Array<any>>} */
export async function entries() {
  const all = await everyEntry()
  const mine = await Promise.all(all.map(isMine))
  return all.filter((_, i) => mine[i])
}

/** The cell an entry writes: resource, location, indicator, campaign or day. */
export const cellKey = (e) => `${e.resource}:${e.location_id}:${e.indicator_id}:${e.campaign_id ?? e.data_date}`

/**
 * Keeps a typed value to be sent: `entry` holds the resource, the key fields, the value, and the row
 * it changes with that row's ETag (none: a new value).
 */
export async function enqueue(entry) {
  if (!owner) throw new Error(t('Sign in again with a network to type values on this browser.'))
  const kept = await sealed({ ...entry, user_id: owner.userId, key: crypto.randomUUID(), state: 'waiting' })
  return inStore('readwrite', (store) => store.add(kept))
}

/** Stores a changed entry of the bound user, sealed again (its row and version may have changed). */
const put = async (entry) => {
  const kept = await sealed(entry)
  return inStore('readwrite', (store) => store.put(kept))
}
const remove = (seq) => inStore('readwrite', (store) => store.delete(seq))

/** A discard under way: nothing is sent until it is over (the network may come back meanwhile). */
let discarding = null

/** Values committed on the page and on their way into the store (IndexedDB answers later). */
const arriving = new Set()

/**
 * Runs `work`, a committed value's way into the outbox, so that `settled()` waits for it: a value
 * committed by leaving its cell for the Sign out button is counted before the sign-out asks.
 * @template T @param {() => Promise<T>} work @returns {Promise<T>}
 */
export function intoOutbox(work) {
  const done = work()
  arriving.add(done)
  const gone = () => arriving.delete(done)
  done.then(gone, gone)
  return done
}

/** Resolves once every value on its way into the outbox is in it (or refused). */
export async function settled() {
  while (arriving.size) await Promise.allSettled([...arriving])
}

/** The event a discard ends with: a page showing what waits reads the outbox again. */
export const DISCARDED = 'rhizome:outbox-discarded'

/** Forgets every entry of the signed-in user (she chose to discard them at sign-out). */
export async function discardMine() {
  const done = (async () => {
    for (const e of await entries()) await remove(e.seq)
  })()
  discarding = done
  try {
    await done
  } finally {
    if (discarding === done) discarding = null
    dispatchEvent(new Event(DISCARDED))
  }
}

/** Forgets the entries of a cell that are not waiting (a settled conflict or refusal). @param {string} cell */
export async function forget(cell) {
  for (const e of await entries()) if (cellKey(e) === cell && e.state !== 'waiting') await remove(e.seq)
}

/**
 * The request of an entry: a PATCH of its row with If-Match, else a POST.
 * @returns {[string, RequestInit]}
 */
function requestOf(entry) {
  // The server refuses it (409 OTHER_USER) when the session is no longer the author's: another tab
  // of this browser may have signed someone else in since.
  const headers = { 'content-type': 'application/json', 'idempotency-key': `"${entry.key}"`, 'x-expected-user-id': String(entry.user_id) }
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
 * goes to `onAnswer(entry, status, body, etag)`. One flush at a time: a second call joins the first,
 * and hears its answers from then on.
 * @param {(entry: any, status: number, body: any, etag: string | null) => void} onAnswer
 */
export function flush(onAnswer) {
  // Every caller hears every answer of the run it joined: the sign-out's flush and the data entry
  // page's both start when a cell is left for the Sign out button, and the page must hear its cell's.
  answering.add(onAnswer)
  flushing ??= sendWaiting(toEveryone).finally(() => {
    flushing = null
    answering.clear()
  })
  return flushing
}

/** The answer handlers of the run under way. @type {Set<(entry: any, status: number, body: any, etag: string | null) => void>} */
const answering = new Set()

/** An answer of the run under way, to each of its callers. @param {any} entry @param {number} status @param {any} body @param {string | null} etag */
function toEveryone(entry, status, body, etag) {
  for (const hear of answering) hear(entry, status, body, etag)
}

async function sendWaiting(onAnswer) {
  for (;;) {
    const entry = (await entries()).find((e) => e.state === 'waiting')
    if (!entry) return true
    // Read before a discard began: it may be one of the discarded. Looked at again once the discard is over.
    if (discarding) {
      await discarding.catch(() => {})
      continue
    }
    let response
    try {
      response = await fetch(...requestOf(entry))
    } catch {
      return false
    }
    // Not signed in any more: kept for its author's next session, and nothing more is queued in her
    // name here (another tab may have signed her out).
    if (response.status === 401) {
      await bindOutbox(null)
      return false
    }
    // The server not answering yet, or asking to come back later (429): tried again later, in the same order.
    if (response.status === 429 || (response.status >= 502 && response.status <= 504)) return false
    const body = await response.json().catch(() => null)
    // Signed in as someone else: kept for its author's next session.
    if (response.status === 409 && body?.code === 'OTHER_USER') return false
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
        message: refusalText(body, String(response.status)),
        current: body?.details?.current ?? null,
        // The version of the value the conflict shows (a 412's ETag): Keep mine writes over that one, no later one.
        current_etag: response.status === 412 ? etag : null,
      })
    }
    onAnswer(entry, response.status, body, etag)
  }
}
