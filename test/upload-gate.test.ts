// The per-user upload gate holds a place from a request's arrival until it is answered: a client that
// goes away mid-body frees it at once (its body will never be read), one that goes away after its last
// byte does not (its file is read all the same). A Fastify server on a loopback port, with a hook that
// stands for the multipart parsing between the body's last byte and the handler.
import { request as httpRequest } from 'node:http'
import Fastify from 'fastify'
import t from 'tap'
import { UploadGate } from '../lib/api/upload-gate.js'
import type { AuthUser } from '../lib/data/auth.js'

/** A promise and the function that settles it. */
function signal() {
  let settle!: () => void
  const settled = new Promise<void>((resolve) => (settle = resolve))
  return { settled, settle }
}

async function gatedServer(t: { teardown(fn: () => unknown): void }) {
  const gate = new UploadGate(1)
  const bodyRead = signal()
  const parsingMayEnd = signal()
  const closed = signal()
  const app = Fastify()
  app.addHook('onRequest', async (request, reply) => {
    request.user = { id: 7 } as AuthUser
    if ((request.query as { watched?: string }).watched) reply.raw.once('close', closed.settle)
    gate.enter(request, reply)
  })
  app.addHook('onSend', async (request) => gate.answered(request))
  // Stands for the multipart parser: the body has arrived, its parts are not yet handed over.
  app.addHook('preValidation', async (request) => {
    if ((request.body as { hold?: boolean }).hold) {
      bodyRead.settle()
      await parsingMayEnd.settled
    }
  })
  app.post(
    '/upload',
    gate.holding(async () => ({ read: true })),
  )
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const address = app.server.address() as { port: number }
  return { url: `http://127.0.0.1:${address.port}/upload`, bodyRead, parsingMayEnd, closed }
}

/** POSTs `body` (JSON); with `declaredLength` longer than it, the request is left waiting for more. */
function send(url: string, body: string, declaredLength = Buffer.byteLength(body)) {
  const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(declaredLength) } })
  req.on('error', () => {})
  const answer = new Promise<number>((resolve) => req.on('response', (res) => (res.resume(), resolve(res.statusCode!))))
  req.write(body)
  return { req, answer }
}

t.test('a client gone after its last byte keeps its place until its body is read and answered', async (t) => {
  const server = await gatedServer(t)
  const first = send(`${server.url}?watched=1`, '{"hold":true}')
  await server.bodyRead.settled
  first.req.destroy()
  await server.closed.settled
  t.equal(await send(server.url, '{}').answer, 429, 'its body is still being read: the place is taken')
  server.parsingMayEnd.settle()
  let status = 429
  for (let i = 0; i < 50 && status === 429; i++) status = await send(server.url, '{}').answer
  t.equal(status, 200, 'once it is answered, the place is free')
})

t.test('a client gone mid-body frees its place at once', async (t) => {
  const server = await gatedServer(t)
  const first = send(`${server.url}?watched=1`, '{"hold":', 100)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(await send(server.url, '{}').answer, 429, 'while its body arrives, the place is taken')
  first.req.destroy()
  await server.closed.settled
  t.equal(await send(server.url, '{}').answer, 200, 'its body will never be read: the place is free')
})
