// WEB_CONCURRENCY > 1: this process forks that many server processes (node:cluster), which share the
// listening port. A process that dies is replaced; on SIGTERM/SIGINT every process drains (finishes
// its requests, hands back its jobs) before this one exits. The processes share nothing but the
// database: caches are emptied by PostgreSQL NOTIFY (docs/scaling.md).
import cluster, { type Worker } from 'node:cluster'

/** A log line in the servers' format (pino's JSON), for what the supervising process does. */
function log(level: 'info' | 'warn', msg: string, extra: Record<string, unknown> = {}) {
  process.stdout.write(`${JSON.stringify({ level: level === 'info' ? 30 : 40, time: Date.now(), pid: process.pid, ...extra, msg })}\n`)
}

/** A process that dies within this long of its start is replaced after a pause, not at once. */
const EARLY_DEATH_MS = 5_000

export async function superviseServers(count: number): Promise<void> {
  let stopping = false
  const started = new Map<Worker, number>()
  const fork = () => {
    const worker = cluster.fork()
    started.set(worker, Date.now())
  }
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (started.get(worker) ?? 0)
    started.delete(worker)
    if (stopping) return
    log('warn', 'a server process died; starting another', { worker_pid: worker.process.pid, code, signal })
    // A process dying at once (a bad configuration, an unreachable database) is not restarted in a tight loop.
    if (lived < EARLY_DEATH_MS) setTimeout(fork, 1_000)
    else fork()
  })
  for (let i = 0; i < count; i++) fork()
  log('info', `${count} server processes`, { processes: count })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stopping = true
      log('info', 'shutting down: every server process drains', { signal })
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined)
      let left = workers.length
      if (!left) process.exit(0)
      for (const worker of workers) {
        worker.once('exit', () => {
          if (--left === 0) process.exit(0)
        })
        worker.process.kill('SIGTERM')
      }
    })
  }
}
