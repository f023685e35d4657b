// An upload's bytes go to a file under DATA_DIR as they arrive (multipart) or as they are decoded
// (base64 in a JSON or form field), never into one buffer: the file is read from there by a worker
// thread and, once accepted, moved to its place (lib/ingest/upload.ts). Each process writes into a
// folder of its own, emptied when it closes.
import { randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, open, readdir, rm, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { ApiError } from '../core/errors.js'
import { emptyFile, unreadableFile } from './files.js'

export interface Spooled {
  path: string
  size: number
}

export const tooLarge = (maxBytes: number) => new ApiError(413, 'PAYLOAD_TOO_LARGE', `File is too large (limit ${maxBytes} bytes)`)

const folders = new Map<string, string>()

/** Whether process `pid` of this machine still runs. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The folders of processes that ended without emptying theirs (killed), removed. */
async function sweep(root: string) {
  const names = await readdir(root).catch(() => [] as string[])
  const dead = names.filter((name) => /^\d+-/.test(name) && !running(Number.parseInt(name, 10)))
  await Promise.all(dead.map((name) => rm(join(root, name), { recursive: true, force: true })))
}

/** This process's spool folder under `dataDir`, made on first use (when the folders of ended processes go). */
async function folderOf(dataDir: string): Promise<string> {
  let folder = folders.get(dataDir)
  if (!folder) {
    folder = join(dataDir, 'uploads-tmp', `${process.pid}-${randomBytes(4).toString('hex')}`)
    folders.set(dataDir, folder)
    await sweep(join(dataDir, 'uploads-tmp'))
  }
  await mkdir(folder, { recursive: true })
  return folder
}

/** A new file's name in the spool folder. */
export const spoolPath = async (dataDir: string) => join(await folderOf(dataDir), randomBytes(12).toString('hex'))

/** `stream` written to a spool file; 413 (the file removed) past `maxBytes`. */
export async function spoolStream(dataDir: string, stream: Readable, maxBytes: number): Promise<Spooled> {
  const path = await spoolPath(dataDir)
  let size = 0
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length
  })
  try {
    await pipeline(stream, createWriteStream(path))
    if (size > maxBytes || (stream as Readable & { truncated?: boolean }).truncated) throw tooLarge(maxBytes)
  } catch (error) {
    await discard(path)
    throw error
  }
  return { path, size }
}

/** Text of base64 characters decoded per window this long (a multiple of 4). */
const WINDOW = 1 << 20

/**
 * A base64 `docfile` (data-URL prefix, whitespace, URL-safe alphabet, no padding allowed) decoded into
 * a spool file a window at a time: the request's text is the only whole copy.
 */
export async function spoolBase64(dataDir: string, text: string, maxBytes: number): Promise<Spooled> {
  const start = text.startsWith('data:') ? (text.includes(',') ? text.indexOf(',') + 1 : text.length) : 0
  const path = await spoolPath(dataDir)
  const file = await open(path, 'w')
  let size = 0
  let carry = ''
  let padded = false
  try {
    for (let at = start; at < text.length || carry; at += WINDOW) {
      const window = carry + text.slice(at, at + WINDOW).replace(/\s+/g, '')
      const last = at + WINDOW >= text.length
      if (padded && window) throw unreadableFile()
      if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(window)) throw unreadableFile()
      const usable = last ? window.length : window.length - (window.length % 4)
      carry = last ? '' : window.slice(usable)
      const chunk = window.slice(0, usable)
      padded = chunk.endsWith('=')
      if (last && chunk.replace(/=+$/, '').length % 4 === 1) throw unreadableFile()
      const bytes = Buffer.from(chunk.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      size += bytes.length
      if (size > maxBytes) throw tooLarge(maxBytes)
      await file.write(bytes)
      if (last) break
    }
    if (!size) throw emptyFile()
  } catch (error) {
    await file.close()
    await discard(path)
    throw error
  }
  await file.close()
  return { path, size }
}

/** Removes a spool file (already moved or removed: nothing to do). */
export const discard = (path: string) => unlink(path).catch(() => {})

/** Removes this process's spool folder under `dataDir` (at close). */
export async function removeSpoolFolder(dataDir: string) {
  const folder = folders.get(dataDir)
  folders.delete(dataDir)
  if (folder) await rm(folder, { recursive: true, force: true })
}
