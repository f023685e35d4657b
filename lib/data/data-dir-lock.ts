// An embedded PGlite data directory is one process's database: a second process writing the same files
// loses or corrupts data. Whoever opens one holds `<dir>.lock` (its pid, and the server's address once
// it listens); a second process is refused at once with what to do instead. A lock whose process is
// gone (a crash, a SIGKILL) is taken over.
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs'

export interface LockHolder {
  pid: number
  /** The running server's base URL, once it listens (the CLI sends its commands there). */
  url?: string
}

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError'
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `The embedded database in ${dir} is in use by process ${holder.pid}${holder.url ? ` (the server at ${holder.url})` : ''}: ` +
        `PGlite is one process's database. Stop that process first${holder.url ? ', or let the command go through the server (the CLI does so by itself)' : ''}` +
        ` (should process ${holder.pid} not be a rhizome-api process, remove ${dir}.lock).`,
    )
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readLock(dir: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(`${dir}.lock`, 'utf8')) as LockHolder
    return Number.isInteger(holder.pid) && holder.pid !== process.pid && alive(holder.pid) ? holder : undefined
  } catch {
    return undefined
  }
}

export interface DataDirLock {
  /** Records the address this process serves the database at. */
  announce(url: string): void
  release(): void
}

/** Takes the lock of `dir`, or throws DataDirInUseError naming the live holder. */
export function lockDataDir(dir: string): DataDirLock {
  const file = `${dir}.lock`
  const write = (holder: LockHolder, flag: 'wx' | 'w') => writeFileSync(file, JSON.stringify(holder), { flag, mode: 0o600 })
  for (let attempt = 0; ; attempt++) {
    try {
      write({ pid: process.pid }, 'wx')
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error
      const holder = readLock(dir)
      if (holder) throw new DataDirInUseError(dir, holder)
      // Left by a process that is gone: removed, then taken like a new one (another taker loses the race).
      unlinkSync(file)
    }
  }
  const release = () => {
    try {
      if ((JSON.parse(readFileSync(file, 'utf8')) as LockHolder).pid === process.pid) unlinkSync(file)
    } catch {
      // Already gone.
    }
  }
  process.once('exit', release)
  return {
    announce: (url) => write({ pid: process.pid, url }, 'w'),
    release: () => {
      process.removeListener('exit', release)
      release()
    },
  }
}
