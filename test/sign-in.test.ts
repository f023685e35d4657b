// The sign-in door as an attacker tries it (lib/api/sign-in-guard.ts, SECURITY.md "Sign-in"): huge
// bodies against a server with a small heap, spraying one address over many usernames, concurrent
// connections racing the budget, a flood of junk usernames, a distributed attack on one account, and
// password checks that must not slow the reads of everyone else.
import { request } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { build } from './helper.js'
import { client } from './api.js'
import { api, postgresDatabase, startServer, until200, type Server } from './processes.js'
import { HashGate, SignInGuard, clientNetwork } from '../lib/api/sign-in-guard.js'
import type { ApiError } from '../lib/core/errors.js'

const PASSWORD = 'correct horse battery'

type App = Awaited<ReturnType<typeof build>>['app']

const signIn = (app: App, username: string, password: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/api/v1/session/', payload: { username, password }, headers })

/** A sign-in POST of `bytes` over a real socket; its status, or 0 when the server closed the connection first. */
function postRaw(server: Server, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = request(`${server.url}/api/v1/session/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': body.length },
    })
    req.on('response', (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', () => resolve(0))
    req.end(body)
  })
}

async function serverWith(t: Test, env: Record<string, string>, nodeArgs: string[] = []) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-sign-in-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const databaseUrl = await postgresDatabase(t)
  const server = await startServer(t, { DATA_DIR: dataDir, DEMO_DATA: '0', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...env }, nodeArgs)
  await until200(server, '/health/ready')
  return server
}

const heapUsed = async (server: Server) => {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  return Number(/^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text)?.[1])
}

t.test('a server with a 256 MB heap takes 500 tries with 8 MiB usernames and 1,100-character passwords, and still reads', async (t) => {
  const server = await serverWith(t, {}, ['--max-old-space-size=256'])
  const before = await heapUsed(server)
  const hugeUsername = Buffer.from(JSON.stringify({ username: 'u'.repeat(8 * 1024 * 1024), password: 'x'.repeat(20) }))
  const longPassword = JSON.stringify({ username: 'alice', password: 'p'.repeat(1_100) })
  const statuses = new Map<number, number>()
  const tally = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1)
  // Eight connections at a time, as a small botnet would.
  for (let round = 0; round < 500 / 10; round++) {
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => postRaw(server, hugeUsername)),
      ...Array.from({ length: 5 }, () =>
        fetch(`${server.url}/api/v1/session/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: longPassword }).then(async (r) => {
          if (r.status === 400) t.equal(((await r.json()) as { code: string }).code, 'PASSWORD_TOO_LONG')
          return r.status
        }),
      ),
    ])
    for (const status of answers) tally(status)
  }
  t.equal(server.child.exitCode, null, 'the server is alive')
  t.same(
    [...statuses.keys()].filter((s) => s !== 413 && s !== 400 && s !== 0),
    [],
    `only 413 and 400 (or a closed socket): ${JSON.stringify([...statuses])}`,
  )
  t.equal(statuses.get(400), 250, 'every long password is a 400, not a cheap wrong try')
  const read = await api(server, '/campaign_type/')
  t.equal(read.status, 200, 'and it answers reads')
  const after = await heapUsed(server)
  t.ok(after - before < 64 * 1024 * 1024, `heap grew by ${((after - before) / 1e6).toFixed(1)} MB (before ${(before / 1e6).toFixed(0)} MB)`)
})

t.test('spraying: 40 usernames from one address meet 429 before the 40th', async (t) => {
  const { app } = await build(t)
  const statuses: number[] = []
  for (let i = 0; i < 40; i++) statuses.push((await signIn(app, `user${i}`, 'one guessed password')).statusCode)
  const first429 = statuses.indexOf(429)
  t.ok(first429 >= 0 && first429 < 39, `the first 429 at try ${first429 + 1}`)
  t.equal(first429, 30, 'after AUTH_FAILURE_MAX (30) wrong tries, any username')
  t.ok(
    statuses.slice(first429).every((s) => s === 429),
    'and every one after it',
  )
})

t.test('8 concurrent connections get no more wrong tries than the budget', async (t) => {
  const { app } = await build(t, { AUTH_FAILURE_MAX: 20 })
  let wrong = 0
  const connection = async (n: number) => {
    for (let i = 0; ; i++) {
      const res = await signIn(app, `alice${n}`, `guess ${i} of ${n}`)
      if (res.statusCode === 401) wrong++
      else return t.equal(res.statusCode, 429)
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, n) => connection(n)))
  t.equal(wrong, 20, 'exactly the budget of 20 wrong tries, however they race')
})

t.test('an account under attack from many addresses: addresses that guessed wrong wait, the user signs in from anywhere else', async (t) => {
  const { app, aliceId } = await build(t, { AUTH_ACCOUNT_FAILURE_MAX: 3, TRUST_PROXY: '127.0.0.1' })
  await client(app).patch(`/user/${aliceId}/`, { password: PASSWORD })
  const from = (address: string) => ({ 'x-forwarded-for': address })
  for (let i = 1; i <= 3; i++) t.equal((await signIn(app, 'alice', `wrong ${i} password`, from(`198.51.100.${i}`))).statusCode, 401)
  const again = await signIn(app, 'alice', 'wrong 4 password', from('198.51.100.1'))
  t.equal(again.statusCode, 429, 'an address that guessed wrong waits the window out')
  t.match(again.headers['retry-after'], /^\d+$/)
  t.equal((await signIn(app, 'alice', PASSWORD, from('198.51.100.2'))).statusCode, 429, 'even with the right password')
  t.equal((await signIn(app, 'alice', PASSWORD, from('203.0.113.9'))).statusCode, 200, 'from another address alice signs in')
  t.equal((await signIn(app, 'alice', 'a fresh guess here', from('203.0.113.10'))).statusCode, 401, 'a fresh address gets one try')
  t.equal((await signIn(app, 'alice', 'and a second one', from('203.0.113.10'))).statusCode, 429, 'and no second')
})

t.test('5,000 junk usernames do not evict a real account’s count; the stores stay bounded', async (t) => {
  const guard = new SignInGuard({ windowMs: 60_000, perAddress: 30, perAccount: 3, capacity: 1_000 })
  const now = Date.now()
  for (let i = 1; i <= 3; i++) guard.admit(`198.51.100.${i}`, 'alice', now).accountExists()
  for (let i = 0; i < 5_000; i++) guard.admit(`10.${i >> 8}.${i & 255}.1`, `junk${i}-${'x'.repeat(100)}`, now)
  t.ok(guard.remembered.accounts <= 1_000 && guard.remembered.addresses <= 1_000, `remembered: ${JSON.stringify(guard.remembered)}`)
  const refused = (ip: string) => {
    try {
      guard.admit(ip, 'alice', now)
      return undefined
    } catch (error) {
      return (error as ApiError).code
    }
  }
  t.equal(refused('198.51.100.1'), 'TOO_MANY_AUTH_FAILURES', 'alice is still under attack: the guessing address waits')
  t.equal(refused('203.0.113.1'), undefined, 'a clean address may still try')
  t.equal(clientNetwork('2001:db8:1:2:3:4:5:6'), clientNetwork('2001:db8:1:2::9'), 'an IPv6 client counts by its /64')
  t.not(clientNetwork('2001:db8:1:2::9'), clientNetwork('2001:db8:1:3::9'))
  t.equal(clientNetwork('::ffff:192.0.2.1'), '192.0.2.1')
})

t.test('a cached read stays under 3× its idle latency while 8 connections try passwords', async (t) => {
  const server = await serverWith(t, { AUTH_FAILURE_MAX: '100000', AUTH_ACCOUNT_FAILURE_MAX: '100000' })
  const read = async () => {
    const started = performance.now()
    const res = await api(server, '/campaign_type/')
    await res.arrayBuffer()
    return performance.now() - started
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]
  const pause = () => new Promise((resolve) => setTimeout(resolve, 25))
  for (let i = 0; i < 20; i++) await read() // warm: the answer is cached from here on
  const idle: number[] = []
  for (let i = 0; i < 40; i++) {
    idle.push(await read())
    await pause()
  }
  let attacking = true
  const tries = { n: 0 }
  const attacker = async (n: number) => {
    while (attacking) {
      await fetch(`${server.url}/api/v1/session/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: `user${n}`, password: `guess ${tries.n++}` }),
      }).then((r) => r.arrayBuffer())
    }
  }
  const attackers = Array.from({ length: 8 }, (_, n) => attacker(n))
  await new Promise((resolve) => setTimeout(resolve, 500))
  const loaded: number[] = []
  for (let i = 0; i < 40; i++) {
    loaded.push(await read())
    await pause()
  }
  attacking = false
  await Promise.all(attackers)
  const [quiet, busy] = [median(idle), median(loaded)]
  t.ok(tries.n > 8, `${tries.n} password tries during the reads`)
  // A floor of 5 ms: a loopback read is ~1 ms, and a busy test machine moves that much on its own.
  t.ok(busy < 3 * Math.max(quiet, 5), `median read ${busy.toFixed(1)} ms under attack, ${quiet.toFixed(1)} ms idle`)
})

t.test('password checks pass a gate: one hash at a time by default, a bounded queue, then 429 with Retry-After', async (t) => {
  const gate = new HashGate(1, 3)
  let running = 0
  let most = 0
  const check = () =>
    gate.run(async () => {
      most = Math.max(most, ++running)
      await new Promise((resolve) => setTimeout(resolve, 20))
      running--
      return true
    })
  const results = await Promise.allSettled(Array.from({ length: 8 }, check))
  t.equal(most, 1, 'never two at once')
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 4, 'one running and three waiting were checked')
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason)
  t.equal(refused.length, 4)
  t.match(refused[0], { statusCode: 429, code: 'SIGN_IN_BUSY', headers: { 'retry-after': '1' } })
  t.equal((await Promise.all([check(), check()])).length, 2, 'and the gate opens again')
})
