// CPU-heavy work (parsing an upload, drawing an export) runs in worker threads, so the event loop that
// answers requests never waits on it (docs/decisions.md, "Heavy work off the event loop"). Each pool is
// piscina's, started on first use; in front of it a bounded queue per owner (a user, or a shared link)
// and in all: past either, the work is refused at once with 429 and Retry-After instead of waiting
// behind everybody else's.
import { cpus } from 'node:os'
import type { TransferListItem } from 'node:worker_threads'
import { Piscina } from 'piscina'
import { ApiError } from './errors.js'

export interface PoolLimits {
  /** Threads of each pool. */
  threads: number
  /** Tasks one owner may have running or waiting in a pool. */
  perOwner: number
  /** Tasks running or waiting in a pool, all owners together. */
  total: number
}

/** The defaults of WORKER_THREADS, WORK_QUEUE_PER_USER and WORK_QUEUE_MAX (lib/core/config.ts). */
export const DEFAULT_POOL_LIMITS: PoolLimits = { threads: 1, perOwner: 4, total: 32 }

let limits = DEFAULT_POOL_LIMITS

/** The limits pools made from now on take (the server sets its configuration's at start). */
export function setPoolLimits(next: PoolLimits) {
  limits = next
}

/** A worker that runs out of heap dies alone; this names the task it was running. */
export const workerOutOfMemory = (error: unknown) => (error as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY'

export class WorkPool {
  private pool: Piscina | undefined
  private readonly owners = new Map<string, number>()
  private inFlight = 0

  /**
   * `file`: the module whose default export runs a task; `heapMb`: each thread's own heap, so a task
   * that outgrows it ends its thread (ERR_WORKER_OUT_OF_MEMORY), never the process.
   */
  constructor(
    readonly name: string,
    private readonly file: URL,
    private readonly options: { heapMb: number; retryAfterS: number; what: string },
  ) {}

  /**
   * Runs `task` for `owner`; a 429 when the owner or the pool has as many as the limits allow, unless
   * `wait` (work bounded elsewhere, such as a job: it waits its turn and counts for the others).
   */
  async run<T>(owner: string, task: unknown, transferList: TransferListItem[] = [], { wait = false } = {}): Promise<T> {
    const mine = this.owners.get(owner) ?? 0
    if (!wait && (mine >= limits.perOwner || this.inFlight >= limits.total)) throw this.busy(mine >= limits.perOwner)
    this.owners.set(owner, mine + 1)
    this.inFlight++
    try {
      return (await this.started().run(task, { transferList })) as T
    } finally {
      this.inFlight--
      const left = (this.owners.get(owner) ?? 1) - 1
      if (left) this.owners.set(owner, left)
      else this.owners.delete(owner)
    }
  }

  /** Tasks running or waiting now (tests, metrics). */
  get size() {
    return this.inFlight
  }

  async close() {
    const pool = this.pool
    this.pool = undefined
    await pool?.close({ force: true })
  }

  private started(): Piscina {
    if (!this.pool) {
      this.pool = new Piscina({
        ...entryOf(this.file),
        // Threads start with the first task, and leave after a minute unused.
        minThreads: 0,
        maxThreads: Math.max(1, Math.min(limits.threads, cpus().length)),
        idleTimeout: 60_000,
        // A task awaits messages from the event loop (an export's reads): the thread's loop must run.
        atomics: 'disabled',
        resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
        // On a busy machine the kernel runs the event loop first: a thread's nice value is its own on
        // Linux (piscina's optional @napi-rs/nice; without it, the threads run at the process's).
        niceIncrement: 10,
        // V8 flags are the process's already (a thread refuses them); module hooks do not carry over.
        execArgv: [],
      })
      // A thread that fails outside a task (at its start) must not end the process: its tasks fail instead.
      this.pool.on('error', (error: Error) => process.emitWarning(`worker pool ${this.name}: ${error.message}`))
    }
    return this.pool
  }

  private busy(ownLimit: boolean) {
    const who = ownLimit ? `you already have ${limits.perOwner} running or waiting (WORK_QUEUE_PER_USER)` : `the server has ${limits.total} (WORK_QUEUE_MAX)`
    return new ApiError(429, 'TOO_MUCH_WORK', `Too many ${this.options.what} at once: ${who}; retry in ${this.options.retryAfterS} s`, undefined, {
      'retry-after': String(this.options.retryAfterS),
    })
  }
}

/** A TypeScript task module is loaded through lib/core/ts-worker.mjs, which registers tsx in the thread. */
const entryOf = (file: URL) =>
  file.pathname.endsWith('.ts') ? { filename: new URL('./ts-worker.mjs', import.meta.url).href, workerData: { module: file.href } } : { filename: file.href }

/** The module beside `from` named `name`: `.ts` under tsx (tests, `npm run dev`), `.js` when built. */
export function siblingModule(from: string, name: string): URL {
  return new URL(`./${name}${from.endsWith('.ts') ? '.ts' : '.js'}`, from)
}
