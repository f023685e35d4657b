// lib/data/writable-host.ts: the search for the host that takes writes, given several in DATABASE_URL.
// A host the hang guard found hung is not asked again while it is (asking it waits out the probe's
// 2 s), so a request refused for a hang is answered at once; once it answers, it is asked again. A
// host standing in for a hung PostgreSQL takes connections and never answers; another refuses them.
import { createServer, type Server, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { WritableHost } from '../lib/data/writable-host.js'

/** A server that takes connections and never answers one, counting them. */
async function silentHost(t: Test) {
  const sockets = new Set<Socket>()
  let connections = 0
  const server: Server = createServer((socket) => {
    connections++
    sockets.add(socket)
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  return { port: (server.address() as { port: number }).port, connections: () => connections }
}

/** A loopback port nothing listens on: connections refused. */
async function refusingPort() {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A new search (the last one's answer stands SEARCH_INTERVAL_MS). */
const afterInterval = () => new Promise((resolve) => setTimeout(resolve, 600))

t.test('a host found hung is not asked again until it answers', async (t) => {
  const hung = await silentHost(t)
  const refusing = await refusingPort()
  const hungUrl = `postgres://rhizome@127.0.0.1:${hung.port}/rhizome`
  const host = new WritableHost(`postgres://rhizome@127.0.0.1:${hung.port},127.0.0.1:${refusing}/rhizome?target_session_attrs=read-write`)
  t.equal(host.url(), hungUrl, 'the first host in use')

  t.equal(await host.find(), undefined, 'no host takes writes')
  t.equal(hung.connections(), 1, 'a search asks the silent host, waiting out its probe')

  host.markHung(hungUrl, true)
  await afterInterval()
  t.equal(await host.find(), undefined, 'still none')
  t.equal(hung.connections(), 1, 'found hung: the search does not ask it again')
  t.equal(host.url(), hungUrl, 'it stays the host in use, for the guard to hear it answer')

  host.markHung(hungUrl, false)
  await afterInterval()
  await host.find()
  t.equal(hung.connections(), 2, 'answering again: asked again')
})
