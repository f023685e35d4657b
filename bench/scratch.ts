// What every benchmark says while it runs and cleans up when stopped: the current step on stderr when it
// changes and at least every 10 s, and on SIGINT or SIGTERM (or an error nothing caught) its processes
// stopped, its scratch databases dropped and its directories removed before it exits
// (test/bench-stop.test.ts).
//
// Three rules make that hold whenever the signal comes:
// - a resource is registered before it is created (a database's drop before its `create database` is
//   sent), so one whose creation is in flight is cleaned up too;
// - once a stop has begun nothing new is started: doing, scratchDir, dropOnStop and startProcess throw;
// - while the stop runs, errors of the benchmark's own code (a request to a server just stopped, a
//   connection the forced drop cut, a refusal above) are noted and ignored: only the stop ends the
//   process. A second signal changes nothing.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const started = Date.now()
let step = 'starting'
let lastSaid = 0
const directories = new Set<string>()
const databases = new Map<string, () => Promise<unknown>>()
const processes = new Set<ChildProcess>()
const cleanups = new Set<() => unknown>()
/** Why the benchmark is stopping, once it is. */
let stopping: string | undefined

/** Whether a stop has begun. */
export const isStopping = () => stopping !== undefined

function refuseWhileStopping(what: string) {
  if (stopping) throw new Error(`not starting ${what}: stopping`)
}

function say(line: string) {
  lastSaid = Date.now()
  process.stderr.write(`[bench ${Math.round((Date.now() - started) / 1000)} s] ${line}\n`)
}

/** Names the step the benchmark is at, said now and again every 10 s while it lasts. */
export function doing(what: string) {
  refuseWhileStopping(what)
  step = what
  say(what)
}

// Checked every second: a 10 s timer could leave nearly 20 s between two lines (a step said just
// after one tick is not yet 10 s old at the next).
setInterval(() => {
  if (Date.now() - lastSaid >= 9_000) say(`still: ${step}`)
}, 1_000).unref()

/** A temporary directory, removed at exit and on a stop. */
export function scratchDir(prefix: string): string {
  refuseWhileStopping(`a directory ${prefix}…`)
  const dir = mkdtempSync(join(tmpdir(), prefix))
  directories.add(dir)
  say(`scratch directory ${dir}`)
  return dir
}

/**
 * A scratch database's forced drop, run on a stop (the benchmark drops it itself when it ends).
 * Called just before its `create database` is sent, on the connection the drop will use: a stop while
 * the creation is in flight queues the drop behind it. Returns what forgets it, once the benchmark has
 * dropped it.
 */
export function dropOnStop(name: string, drop: () => Promise<unknown>) {
  refuseWhileStopping(`the database ${name}`)
  databases.set(name, drop)
  say(`scratch database ${name}`)
  return () => databases.delete(name)
}

/** A server or worker process, spawned now and stopped on a stop. */
export function startProcess(command: string, args: string[], options: SpawnOptions): ChildProcess {
  refuseWhileStopping(`${command} ${args.join(' ')}`)
  const child = spawn(command, args, options)
  processes.add(child)
  child.once('exit', () => processes.delete(child))
  return child
}

/**
 * Something else to undo on a stop (a browser, a PostgreSQL cluster of its own). Returns what forgets
 * it: true if a stop has not already run it.
 */
export function onStop(cleanup: () => unknown): () => boolean {
  cleanups.add(cleanup)
  return () => cleanups.delete(cleanup)
}

function removeDirectories() {
  for (const dir of directories) rmSync(dir, { recursive: true, force: true })
  directories.clear()
}

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

async function stopEverything(reason: string, code: number) {
  if (stopping) return
  stopping = reason
  const others = cleanups.size ? `, ${cleanups.size} other cleanup(s)` : ''
  say(`${reason}: stopping ${processes.size} process(es), dropping ${databases.size} database(s), removing ${directories.size} directory(ies)${others}`)
  const attempt = (what: string, work: () => unknown) =>
    Promise.resolve()
      .then(work)
      .catch((error: Error) => say(`could not ${what}: ${error.message}`))
  // Until none is left: a step under way when the signal came may register one more meanwhile.
  while (cleanups.size || processes.size) {
    const batch = [...cleanups]
    cleanups.clear()
    await Promise.all([...batch.map((cleanup) => attempt('clean up', cleanup)), ...[...processes].map(stopProcess)])
  }
  for (const [name, drop] of databases) await attempt(`drop ${name}`, drop)
  removeDirectories()
  say('cleaned up')
  process.exit(code)
}

process.on('SIGINT', () => void stopEverything('SIGINT', 130))
process.on('SIGTERM', () => void stopEverything('SIGTERM', 143))
process.on('uncaughtException', (error) => {
  if (stopping) return say(`ignored while stopping: ${error.message}`)
  console.error(error)
  void stopEverything('an error', 1)
})
process.once('exit', removeDirectories)
