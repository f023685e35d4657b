// Shared bench helpers: start a server process, wait for it, run one bounded autocannon round.
import { spawn, type ChildProcess } from 'node:child_process'
import autocannon from 'autocannon'
import pg from 'pg'

export interface Round {
  name: string
  requests_per_s: number
  p50_ms: number
  p99_ms: number
  errors: number
  non2xx: number
}

export async function startServer(args: string[], env: Record<string, string | undefined>, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn' }, stdio: ['ignore', 'inherit', 'inherit'] })
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
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

/** A warm-up, then one bounded run (50 connections, `seconds` long). */
export async function round(name: string, url: string, headers: Record<string, string> = {}, seconds = 10): Promise<Round> {
  await autocannon({ url, connections: 50, duration: 2, headers })
  const result = await autocannon({ url, connections: 50, duration: seconds, headers })
  return {
    name,
    requests_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  }
}

export function table(rounds: Round[]): string {
  const lines = ['| run | req/s | p50 ms | p99 ms | errors | non-2xx |', '|---|---|---|---|---|---|']
  for (const r of rounds) lines.push(`| ${r.name} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.errors} | ${r.non2xx} |`)
  return lines.join('\n')
}

/**
 * A scratch database on the server of `adminUrl` (BENCH_DATABASE_URL), created now; `close()` drops
 * it, unless BENCH_KEEP=1 asks to keep it for an EXPLAIN session (its URL is printed then).
 */
export async function scratchDatabase(adminUrl: string, prefix: string): Promise<{ url: string; close: () => Promise<void> }> {
  const name = `${prefix}_${process.pid}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    close: async () => {
      if (process.env.BENCH_KEEP) console.log(`kept ${url}`)
      else await admin.query(`drop database if exists ${name}`)
      await admin.end()
    },
  }
}
