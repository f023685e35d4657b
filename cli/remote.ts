// The operator commands through a running server's API, as a superuser: what the CLI does when the
// embedded database is held by a server (only that process may open it), or when `--server` is given.
// An upload runs there as a background job, its progress drawn here.
import { openAsBlob } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { parse } from 'csv-parse/sync'
import { hashKey } from '../lib/data/auth.js'
import type { Options } from './commands.js'
import { keyOf, UsageError } from './commands.js'
import { progressBar } from './progress-bar.js'
import type { ProgressReport } from '../lib/core/progress.js'

type Row = Record<string, unknown>

export class RemoteError extends Error {
  override name = 'RemoteError'
}

/**
 * fetch, with a failure that says which server and request, and why (`fetch failed` alone says
 * neither): ECONNREFUSED for a server that is not running, ENOTFOUND for a host that does not resolve.
 */
export async function send(url: URL, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (error) {
    const cause = (error as { cause?: NodeJS.ErrnoException }).cause
    const why = cause?.code ?? cause?.message ?? (error as Error).message
    throw new RemoteError(`cannot reach the server at ${url.origin}: ${init.method ?? 'GET'} ${url.href} failed (${why})`)
  }
}

/** The Authorization header of a key as printed (`user:key`) or bare. */
export const authorizationOf = (key: string) => (key.includes(':') ? `ApiKey ${key}` : `Bearer ${key}`)

/** A small client of the API: JSON in and out, a 4xx/5xx becomes an error naming the server's message. */
export function apiClient(base: string, key: string) {
  const authorization = authorizationOf(key)
  return async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Row> {
    // A form (an upload) goes as multipart, its file streamed to the server's spool; anything else as JSON.
    const form = body instanceof FormData
    const response = await send(new URL(`/api/v1${path}`, base), {
      method,
      headers: { authorization, ...(body === undefined || form ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
    })
    const text = await response.text()
    const json = text ? (JSON.parse(text) as Row) : {}
    if (!response.ok) throw new RemoteError(`${method} ${path}: ${response.status} ${String(json.message ?? text)}`)
    return json
  }
}

type Call = ReturnType<typeof apiClient>

async function userId(call: Call, username: string): Promise<number> {
  const { objects } = (await call('GET', `/user/?username=${encodeURIComponent(username)}`)) as { objects: Row[] }
  if (!objects.length) throw new UsageError(`no user named ${username}`)
  return objects[0].id as number
}

async function newKey(call: Call, username: string, id: number): Promise<string> {
  const created = await call('POST', '/api_key/', { user_id: id })
  return `${username}:${created.key as string}`
}

/** content_type,source_object_code,master_object_id lines, set on the document's codes (new codes are added). */
async function applyMappings(call: Call, documentId: number, file: string): Promise<number> {
  const rows = parse(await readFile(file), { columns: true, skip_empty_lines: true, trim: true }) as Array<Record<string, string>>
  const { objects } = (await call('GET', `/source_object_map/?document_id=${documentId}&limit=100000`)) as { objects: Row[] }
  const byCode = new Map(objects.map((m) => [`${m.content_type} ${m.source_object_code}`, m.id as number]))
  for (const row of rows) {
    const existing = byCode.get(`${row.content_type} ${row.source_object_code}`)
    const master_object_id = Number(row.master_object_id)
    if (existing !== undefined) await call('PATCH', `/source_object_map/${existing}/`, { master_object_id })
    else await call('POST', '/source_object_map/', { content_type: row.content_type, source_object_code: row.source_object_code, master_object_id })
  }
  return rows.length
}

/** How often the CLI asks a background job how far it has come. */
const POLL_MS = 500

/**
 * Runs a pipeline step on the server in the background (`Prefer: respond-async`), drawing its progress
 * until it ends; returns its result (the document), or throws its error's code and message.
 */
async function runInBackground(call: Call, step: string, documentId: number): Promise<Row> {
  let job = await call('GET', `/${step}/?document_id=${documentId}`, undefined, { prefer: 'respond-async' })
  const bar = progressBar()
  try {
    while (!['completed', 'failed', 'cancelled'].includes(job.state as string)) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
      job = await call('GET', `/job/${job.id}/`)
      if (job.progress) bar.update(job.progress as ProgressReport)
    }
  } finally {
    bar.stop()
  }
  if (job.state === 'completed') return job.result as Row
  const error = (job.error ?? { code: 'JOB_CANCELLED', message: `job ${job.id} was cancelled` }) as { code: string; message: string }
  throw new RemoteError(`${step}: ${error.code} ${error.message}`)
}

/** The commands a running server takes through its API; any other waits for the server to stop. */
export const REMOTE_COMMANDS = ['create-user', 'create-key', 'set-password', 'revoke-key', 'upload', 'migrate']

/** Runs one command against the server at `base`; returns the exit code. */
export async function runRemote(
  base: string,
  key: string,
  command: string,
  arg: string | undefined,
  options: Options,
  print: (line: string) => void,
): Promise<number> {
  const call = apiClient(base, key)
  switch (command) {
    case 'create-user': {
      if (!arg) throw new UsageError('create-user needs a username')
      // The location is asked first, and a user whose responsibility is then refused is deleted: left
      // behind, a user meant to be restricted would read and write everything.
      if (options.location) await call('GET', `/location/${Number(options.location)}/`)
      const user = await call('POST', '/user/', { username: arg, is_superuser: options.superuser ?? false, ...(options.email ? { email: options.email } : {}) })
      const id = user.id as number
      if (options.location) {
        await call('POST', '/location_responsibility/', { user_id: id, top_lvl_location_id: Number(options.location) }).catch(async (error: unknown) => {
          await call('DELETE', `/user/${id}/`)
          throw error
        })
      }
      print(await newKey(call, arg, id))
      return 0
    }
    case 'create-key': {
      if (!arg) throw new UsageError('create-key needs a username')
      print(await newKey(call, arg, await userId(call, arg)))
      return 0
    }
    case 'set-password': {
      if (!arg) throw new UsageError('set-password needs a username')
      await call('PATCH', `/user/${await userId(call, arg)}/`, { password: options.password ?? '' })
      print(`password set for ${arg}; their sessions ended`)
      return 0
    }
    case 'revoke-key': {
      const clear = keyOf(arg)
      if (!clear && !options.user) throw new UsageError('revoke-key needs a key or --user <username>')
      const filter = options.user ? `user_id=${await userId(call, options.user)}` : `key_hash=${hashKey(clear!)}`
      const { meta } = (await call('GET', `/api_key/?${filter}`)) as { meta: { total_count: number } }
      if (meta.total_count) await call('DELETE', `/api_key/?${filter}`)
      print(`${meta.total_count} key(s) revoked`)
      return meta.total_count ? 0 : 1
    }
    case 'upload': {
      if (!arg) throw new UsageError('upload needs a file')
      // Multipart: a JSON body is held to BODY_LIMIT_BYTES, a file part to MAX_UPLOAD_BYTES.
      const form = new FormData()
      form.set('doc_title', basename(arg))
      form.set('file_type', options.type ?? '')
      if (options.dateOrder) form.set('date_order', options.dateOrder)
      if (options.conflict) form.set('conflict', options.conflict)
      if (options.encoding) form.set('encoding', options.encoding)
      form.set('docfile', await openAsBlob(arg), basename(arg))
      const doc = await call('POST', '/document/', form)
      const id = doc.id as number
      let result = await runInBackground(call, 'transform_upload', id)
      if (options.map) {
        print(`${await applyMappings(call, id, options.map)} mapping(s) applied`)
        result = await runInBackground(call, 'refresh_master', id)
      }
      print(JSON.stringify({ document_id: id, ...(result.ingest_stats as Row) }, null, 2))
      return 0
    }
    case 'migrate':
      print(`the server at ${base} applied every migration when it started`)
      return 0
  }
  throw new RemoteError(`${command} cannot run while the server at ${base} holds the embedded database: stop the server first`)
}
