// Shared bench helpers: start a server process, wait for it, run one bounded autocannon round.
import type { ChildProcess } from 'node:child_process'
import autocannon from 'autocannon'
import { createWriteStream, readFileSync } from 'node:fs'
import pg from 'pg'
import { doing, dropOnStop, isStopping, startProcess } from './scratch.js'

export { doing, onStop, scratchDir, startProcess } from './scratch.js'

export interface Round {
  name: string
  requests_per_s: number
  p50_ms: number
  p99_ms: number
  errors: number
  non2xx: number
}

export async function startServer(args: string[], env: Record<string, string | undefined>, port: number, node = process.execPath): Promise<ChildProcess> {
  doing(`starting ${args.join(' ')} on port ${port}`)
  // The server's own output (its admin password line) goes to stderr: stdout is the bench's results.
  const child = startProcess(node, args, {
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', process.stderr, 'inherit'],
  })
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`)
      if (res.status === 200 || res.status === 404) return child
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  child.kill()
  throw new Error(`server ${args.join(' ')} did not start`)
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

/** One autocannon run as a table row. */
function summary(name: string, result: autocannon.Result): Round {
  return {
    name,
    requests_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  }
}

/** A warm-up, then one bounded run (50 connections, `seconds` long) of `GET url`. */
export async function round(name: string, url: string, headers: Record<string, string> = {}, seconds = 10): Promise<Round> {
  doing(`${name}: 2 s of warm-up, then ${seconds} s of load`)
  await autocannon({ url, connections: 50, duration: 2, headers })
  const result = await autocannon({ url, connections: 50, duration: seconds, headers })
  return summary(name, result)
}

/**
 * The same for a write: `POST url` of the JSON `body`, where autocannon replaces each `[<id>]` with a
 * new id per request (a unique name, so every request creates a row).
 */
export async function writeRound(name: string, url: string, body: Record<string, unknown>, headers: Record<string, string> = {}, seconds = 10): Promise<Round> {
  doing(`${name}: 2 s of warm-up, then ${seconds} s of load`)
  const options = { url, method: 'POST' as const, body: JSON.stringify(body), idReplacement: true, headers: { ...headers, 'content-type': 'application/json' } }
  await autocannon({ ...options, connections: 50, duration: 2 })
  return summary(name, await autocannon({ ...options, connections: 50, duration: seconds }))
}

/** The middle value (of an even count, the upper of the two middle ones). */
export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export function table(rounds: Round[]): string {
  const lines = ['| run | req/s | p50 ms | p99 ms | errors | non-2xx |', '|---|---|---|---|---|---|']
  for (const r of rounds) lines.push(`| ${r.name} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.errors} | ${r.non2xx} |`)
  return lines.join('\n')
}

/** The PostgreSQL server the benchmarks make their scratch databases on (`BENCH_DATABASE_URL`, else the local one). */
export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/**
 * A scratch database on the server of `adminUrl` (BENCH_DATABASE_URL), created now; `close()` drops
 * it, unless BENCH_KEEP=1 asks to keep it for an EXPLAIN session (its URL is printed then).
 */
export async function scratchDatabase(adminUrl: string, prefix: string): Promise<{ url: string; close: () => Promise<void> }> {
  const name = `${prefix}_${process.pid}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  // Stopped midway, even while it is being created, the benchmark drops it too, whoever is connected.
  const forget = dropOnStop(name, () => admin.query(`drop database if exists ${name} with (force)`))
  await admin.query(`create database ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    close: async () => {
      if (process.env.BENCH_KEEP) console.log(`kept ${url}`)
      else await admin.query(`drop database if exists ${name}`)
      forget()
      // A stop underway may have queued its own drop on this connection: the connection ends with the process.
      if (!isStopping()) await admin.end()
    },
  }
}

// A varied corpus: short and long, benign and offensive, emoji, mentions, URLs.
const WORDS =
  'the of and to in is you that it for on with as was this but be have not are my at your they all just so can what when about like people go get no would time out if one up love good day stupid idiot fucking hate great thanks @user http://t.co/x 😂 🙏 #maga lol'.split(
    ' ',
  )
export function corpus(n: number): string[] {
  let seed = 42
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
  return Array.from({ length: n }, () => Array.from({ length: 3 + Math.floor(random() * 40) }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' '))
}

/** POST /detect with bodies drawn from `corpus(500)`: a warm-up, then one bounded run (50 connections). */
export async function detectRound(port: number, name: string, seconds = 10): Promise<Round> {
  const bodies = corpus(500).map((text) => JSON.stringify({ text }))
  const run = (duration: number) =>
    autocannon({
      url: `http://127.0.0.1:${port}/detect`,
      connections: 50,
      duration,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          setupRequest: (req) => ({ ...req, body: bodies[Math.floor(Math.random() * bodies.length)] }),
        },
      ],
    })
  await run(2)
  const result = await run(seconds)
  return summary(name, result)
}

/**
 * The fields of /proc/<pid>/stat after the command name (the first is the state), and that name;
 * null when /proc cannot show the process.
 */
export function procStat(pid: number | undefined): { command: string; fields: string[] } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const end = stat.lastIndexOf(') ')
    return { command: stat.slice(stat.indexOf('(') + 1, end), fields: stat.slice(end + 2).split(' ') }
  } catch {
    return null
  }
}

/** CPU time (user + system) a local process has used so far, in µs; null where /proc cannot show it. */
export function cpuMicros(pid: number | undefined): number | null {
  // Fields 14 and 15 of /proc/<pid>/stat: utime and stime in clock ticks (100 Hz).
  const stat = procStat(pid)
  return stat && (Number(stat.fields[11]) + Number(stat.fields[12])) * 10_000
}

/** A campaign file of `mb` MB at `path`: four columns, 60 row keys (the shape of a file that ended a server). */
export async function campaignCsv(path: string, mb: number) {
  const out = createWriteStream(path)
  out.write('geocode,campaign,missed,vaccinated\n')
  for (let i = 0, size = 0; size < mb * 1_000_000; i++) {
    const line = `LOC-${String(i % 20).padStart(4, '0')},CAMP-${i % 3},${(i * 7) % 1000},${(i * 7) % 1000}\n`
    size += line.length
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  await new Promise<void>((resolve) => out.end(() => resolve()))
}

/** The server's event-loop delay since the last scrape of its /metrics, in ms (prom-client's p99 and max). */
export async function serverLag(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text()
  const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? Number.NaN) * 1000
  return { p99: value('nodejs_eventloop_lag_p99_seconds'), max: value('nodejs_eventloop_lag_max_seconds') }
}
