// lib/data/hang-guard.ts against a real PostgreSQL: a ping answered while this process's event loop
// was blocked (a long synchronous step) is an answer, not a hang. Timers run before I/O, so the
// guard's deadline would otherwise fire first and cut every connection in use.
import { createServer, type Socket } from 'node:net'
import t from 'tap'
import pg from 'pg'
import { HangGuard } from '../lib/data/hang-guard.js'

const url = process.env.DATABASE_URL

t.test('a ping answered during a blocked event loop is not a hang', { skip: !url && 'needs PostgreSQL (DATABASE_URL)' }, async (t) => {
  const changes: boolean[] = []
  const guard = new HangGuard({ url: () => url!, hangMs: 300, onChange: (hung) => changes.push(hung) })
  const query = pg.Client.prototype.query
  let blockNext = false
  let blocked = 0
  // The guard's ping, once its connection is up: sent, then the loop held for 1 s before its answer is read.
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const sent = (query as (...a: unknown[]) => unknown).apply(this, args)
    if (blockNext && args[0] === 'select 1') {
      blockNext = false
      // Later in this turn of the loop, as a request's synchronous work would.
      setImmediate(() => {
        const until = Date.now() + 1_000
        while (Date.now() < until) blocked++
      })
    }
    return sent
  } as typeof query
  t.teardown(async () => {
    pg.Client.prototype.query = query
    await guard.stop()
  })
  guard.start()
  await new Promise((resolve) => setTimeout(resolve, 1_500)) // the first ping has connected and answered
  blockNext = true
  await new Promise((resolve) => setTimeout(resolve, 2_500)) // the second ping, blocked, then one more
  t.ok(blocked > 0, 'the loop was held while a ping was out')
  t.same(changes, [], 'never taken for hung')
  t.notOk(guard.hung)
})

t.test('a host that takes the connection and never answers is hung from the first ping; a refused one is not', async (t) => {
  // Accepts and holds every connection, says nothing: a database stopped before the ping's connection was made.
  const held = new Set<Socket>()
  const silent = createServer((socket) => held.add(socket))
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const { port } = silent.address() as { port: number }
  t.teardown(() => {
    for (const socket of held) socket.destroy()
    silent.close()
  })
  const changes: boolean[] = []
  const guard = new HangGuard({ url: () => `postgres://nobody@127.0.0.1:${port}/none`, hangMs: 300, onChange: (hung) => changes.push(hung) })
  t.teardown(() => guard.stop())
  guard.start()
  await new Promise((resolve) => setTimeout(resolve, 2_000)) // the first ping at 1 s, late at 1.3 s
  t.ok(guard.hung, 'hung')
  t.same(changes, [true], 'told once')

  // Nothing listening: connections are refused at once, which requests see by themselves.
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const refusedPort = (closed.address() as { port: number }).port
  await new Promise((resolve) => closed.close(resolve))
  const refused = new HangGuard({ url: () => `postgres://nobody@127.0.0.1:${refusedPort}/none`, hangMs: 300 })
  t.teardown(() => refused.stop())
  refused.start()
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  t.notOk(refused.hung, 'a refused connection is not a hang')
})
