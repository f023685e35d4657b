// lib/data/hang-guard.ts against a real PostgreSQL: a ping answered while this process's event loop
// was blocked (a long synchronous step) is an answer, not a hang. Timers run before I/O, so the
// guard's deadline would otherwise fire first and cut every connection in use.
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
