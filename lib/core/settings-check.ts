// The settings checked against the machine before anything is created or printed (README,
// "Configuration"): the listen host resolves, the data directory is one this user can write. A bad one
// stops the start with the variable's name (exit 2), where it used to surface later as an uncaught
// ENOTFOUND or ENOTDIR, after a new database and admin key had been made, or as a hang.
import { constants } from 'node:fs'
import { access, mkdtemp, rmdir, stat } from 'node:fs/promises'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { badSetting, type Config } from './config.js'

/** How long one check may take: a file system or resolver that does not answer is itself the fault. */
export const SETTINGS_CHECK_MS = 3_000

async function hostResolves(host: string) {
  if (isIP(host)) return
  try {
    await lookup(host)
  } catch (error) {
    throw badSetting('HOST', host, `${(error as NodeJS.ErrnoException).code ?? (error as Error).message}: this machine does not resolve it`)
  }
}

/** The directory, or the nearest of its parents that exists, must be a directory this user may write. */
async function dataDirUsable(dataDir: string) {
  let path = resolve(dataDir)
  for (;;) {
    const found = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' && dirname(path) !== path) return undefined
      throw badSetting('DATA_DIR', dataDir, `${path}: ${error.code}`)
    })
    if (found) break
    path = dirname(path)
  }
  if (!(await stat(path)).isDirectory()) throw badSetting('DATA_DIR', dataDir, `${path} is not a directory`)
  await access(path, constants.W_OK | constants.X_OK).catch((error: NodeJS.ErrnoException) => {
    throw badSetting('DATA_DIR', dataDir, `${path} is not writable by this user: ${error.code}`)
  })
  // Permission bits do not say it all: root passes access() everywhere, and /proc or /sys refuse a new
  // directory whatever they say. One is made there and removed at once.
  const probe = await mkdtemp(join(path, '.rhizome-check-')).catch((error: NodeJS.ErrnoException) => {
    throw badSetting('DATA_DIR', dataDir, `${path} takes no new directory: ${error.code}`)
  })
  await rmdir(probe)
}

function within<T>(name: string, value: string, work: Promise<T>, limitMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(badSetting(name, value, `checking it did not finish within ${limitMs} ms`)), limitMs)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/** Throws a ConfigError naming the first setting the machine refuses. */
export async function checkSettings(config: Config, limitMs = SETTINGS_CHECK_MS): Promise<void> {
  await within('HOST', config.HOST, hostResolves(config.HOST), limitMs)
  await within('DATA_DIR', config.DATA_DIR, dataDirUsable(config.DATA_DIR), limitMs)
}
