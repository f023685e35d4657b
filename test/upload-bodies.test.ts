// Concurrent uploads do not end the server: a JSON body is parsed whole on the heap, so one above
// BODY_LIMIT_BYTES is refused (413, told to send the file as multipart) before it is read, whether it
// says its length or comes in chunks; and a user's uploads in progress are counted before their bodies
// are read (429 past WORK_QUEUE_PER_USER). A real server process under a 256 MB heap, as an operator
// runs it, sent 66 MB JSON bodies four at a time by the superuser and three by a restricted officer.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import { tempDir } from './helper.js'
import { api, demoServer, postgresDatabase, type Server, startServer, until200 } from './processes.js'

const BODY_BYTES = 66_000_000

/** A JSON upload body of about BODY_BYTES: its base64 docfile a CSV that repeats one line. */
function bigJsonBody(): Buffer {
  const line = 'LOC-0001,CAMP-1,5,7\n'
  const csv = `geocode,campaign,missed,vaccinated\n${line.repeat(Math.ceil((BODY_BYTES * 3) / 4 / line.length))}`
  return Buffer.from(JSON.stringify({ doc_title: 'big.csv', file_type: 'campaign', docfile: Buffer.from(csv).toString('base64') }))
}

/**
 * POSTs `body` to /api/v1/document/ with `headers`, 256 KB at a time; `chunked`: no Content-Length.
 * Fastify closes the connection after refusing a body (the client might send more), so a write after
 * the answer fails and Node's client then drops the answer it had not read: the body is sent as a
 * careful client does. With a length, only if no answer came to the headers within 3 s (as one waiting
 * for 100-continue); in chunks, each a moment after the last (an answer stops the sending).
 */
function post(server: Server, body: Buffer, headers: Record<string, string>, chunked: boolean) {
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const url = new URL('/api/v1/document/', server.url)
    const req = httpRequest(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(body.length) }) },
    })
    let answered = false
    req.on('response', (res) => {
      answered = true
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => {
        resolve({ status: res.statusCode!, body: JSON.parse(text || '{}') })
        req.destroy()
      })
    })
    // In chunks, the server's refusal can cross a chunk in flight: it closes the connection while more
    // arrives, and the reset can take its answer with it. The body was refused all the same (status 0).
    req.on('error', (error: NodeJS.ErrnoException) =>
      setTimeout(() => {
        if (answered) return
        if (chunked && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) resolve({ status: 0, body: {} })
        else reject(error)
      }, 2000),
    )
    const step = 256 * 1024
    let at = 0
    const writeNext = () => {
      if (answered || req.destroyed) return
      if (at >= body.length) return void req.end()
      const chunk = body.subarray(at, at + step)
      at += step
      // The next chunk a moment after the write was handed over: the loop has read the socket meanwhile,
      // so an answer that came is seen before more is written.
      req.write(chunk, () => setTimeout(writeNext, 3))
    }
    if (chunked) return writeNext()
    req.flushHeaders()
    setTimeout(writeNext, 3000)
  })
}

t.test('66 MB JSON uploads four at a time under a 256 MB heap: each refused or stored, the process lives', async (t) => {
  const { server } = await demoServer(t, ['--max-old-space-size=256'])

  // A restricted officer of one province, with a key of her own.
  const province = (await (await api(server, '/location/?name=Eastvale')).json()).objects[0]
  const officer = await (await api(server, '/user/', { method: 'POST', body: JSON.stringify({ username: 'officer' }) })).json()
  t.equal(
    (await api(server, '/location_responsibility/', { method: 'POST', body: JSON.stringify({ user_id: officer.id, top_lvl_location_id: province.id }) }))
      .status,
    201,
  )
  const officerKey = (await (await api(server, '/api_key/', { method: 'POST', body: JSON.stringify({ user_id: officer.id }) })).json()).key
  const asOfficer = { authorization: `ApiKey officer:${officerKey}` }

  const body = bigJsonBody()
  for (const [who, headers, count] of [
    ['the superuser', server.admin(), 4],
    ['the officer', asOfficer, 3],
  ] as const) {
    for (const chunked of [false, true]) {
      const answers = await Promise.all(Array.from({ length: count }, () => post(server, body, headers, chunked)))
      const how = chunked ? 'in chunks' : 'with Content-Length'
      const statuses = answers.map((a) => a.status)
      // With a length, refused before a byte is read: each 413. In chunks, refused once past the limit:
      // 413, or the connection closed on the rest of the body (0).
      t.ok(
        statuses.every((status) => status === 413 || (chunked && status === 0)),
        `${who}'s ${count} bodies ${how}: each refused (${statuses.join(' ')})`,
      )
      const refusal = answers.find((a) => a.status === 413)
      if (!chunked || refusal) {
        t.match(refusal?.body, { code: 'PAYLOAD_TOO_LARGE', message: /multipart\/form-data/, request_id: String }, 'the refusal says to send it as multipart')
      }
      t.equal(server.child.exitCode, null, `the process lives after ${who}'s bodies ${how}`)
    }
  }

  // The same file as a multipart part is stored: the limit is on JSON, not on files.
  const csv = JSON.parse(body.toString()).docfile as string
  const form = new FormData()
  form.set('file_type', 'campaign')
  form.set('docfile', new Blob([Buffer.from(csv, 'base64').subarray(0, 20_000_000)]), 'part.csv')
  const stored = await fetch(`${server.url}/api/v1/document/`, { method: 'POST', headers: server.admin(), body: form })
  t.equal(stored.status, 201, 'a 20 MB file as a multipart part is stored')
  t.equal((await until200(server, '/health/live')) < 5, true, 'the server answers')
})

t.test("a user's uploads are counted before their bodies are read", async (t) => {
  const dataDir = tempDir(t)
  const databaseUrl = await postgresDatabase(t)
  const env = { DATA_DIR: dataDir, DEMO_DATA: '0', WORK_QUEUE_PER_USER: '2', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const server = await startServer(t, env)
  await until200(server, '/health/ready')
  // Two uploads whose bodies have not arrived yet hold her two places; a third is refused at once.
  const held = [0, 1].map(() => {
    const req = httpRequest(new URL('/api/v1/document/', server.url), {
      method: 'POST',
      headers: { ...server.admin(), 'content-type': 'application/json', 'content-length': '1000' },
    })
    req.on('error', () => {})
    req.write('{"doc_title":')
    return req
  })
  // The third is sent once both are connected and the server has had a second to read their headers
  // (a third sent sooner would take a place itself: the check is of the gate, not of a race).
  await Promise.all(
    held.map((req) => new Promise((resolve) => req.once('socket', (socket) => (socket.connecting ? socket.once('connect', resolve) : resolve(null))))),
  )
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const third = await post(server, Buffer.from('{}'), server.admin(), false)
  t.equal(third.status, 429, 'the third upload in progress is refused')
  t.match(third.body, { code: 'TOO_MANY_UPLOADS', details: { limit: 2 } })
  for (const req of held) req.destroy()
  // Places are given back when a request ends, answered or abandoned.
  let status = 429
  for (let i = 0; i < 50 && status === 429; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    status = (await post(server, Buffer.from('{}'), server.admin(), false)).status
  }
  t.equal(status, 400, 'once the two were abandoned, an upload is read again (400: no docfile)')

  // A client that goes away once its whole file is sent does not free its place while the file is
  // still being read.
  const lines = ['geocode,campaign,missed,vaccinated']
  for (let i = 0; lines.length < 600_000; i++) lines.push(`LOC-${i % 20},CAMP-${i % 3},${(i * 7) % 1000},${(i * 3) % 1000}`)
  const form = new FormData()
  form.set('file_type', 'campaign')
  form.set('docfile', new Blob([lines.join('\n')]), 'big.csv')
  const multipart = new Response(form)
  const bytes = Buffer.from(await multipart.arrayBuffer())
  const fileBytes = Buffer.byteLength(lines.join('\n'))
  const requests = [0, 1].map(() => {
    const req = httpRequest(new URL('/api/v1/document/', server.url), {
      method: 'POST',
      headers: { ...server.admin(), 'content-type': multipart.headers.get('content-type')!, 'content-length': String(bytes.length) },
    })
    req.on('error', () => {})
    req.end(bytes)
    return req
  })
  // Hung up once the server holds both files whole (its spool files have their size): their reading
  // has begun, or is about to.
  const spool = join(dataDir, 'uploads-tmp')
  const spooledWhole = () =>
    existsSync(spool) &&
    readdirSync(spool, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && statSync(join(e.parentPath, e.name)).size === fileBytes).length ===
      2
  for (let i = 0; i < 600 && !spooledWhole(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  for (const req of requests) req.destroy()
  const meanwhile = await post(server, Buffer.from('{}'), server.admin(), false)
  t.equal(meanwhile.status, 429, 'their files still being read, both places are still taken')
  status = 429
  // Reading two files of 600,000 lines takes seconds on an idle machine and more under CI's load.
  for (const deadline = Date.now() + 90_000; Date.now() < deadline && status === 429; ) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    status = (await post(server, Buffer.from('{}'), server.admin(), false)).status
  }
  t.equal(status, 400, 'and given back once they are read')
})
