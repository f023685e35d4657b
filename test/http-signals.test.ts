// HTTP's own signals (RFC 9110): a 401 names the schemes it takes, an Accept no representation meets is
// 406 in the API's Error shape, Vary names the cookie that decides an answer, and the OpenAPI document
// lists /metrics and a 4xx for every operation.
import t from 'tap'
import { admin, build } from './helper.js'

const ERROR_KEYS = ['code', 'details', 'error', 'message', 'request_id', 'statusCode']

t.test('401 carries WWW-Authenticate with the schemes the API takes', async (t) => {
  const { app } = await build(t)
  for (const authorization of [undefined, 'ApiKey admin:wrong', 'Bearer nope']) {
    const res = await app.inject({ url: '/api/v1/campaign/', headers: authorization ? { authorization } : {} })
    t.equal(res.statusCode, 401, String(authorization))
    t.equal(res.headers['www-authenticate'], 'ApiKey realm="rhizome-api", Bearer realm="rhizome-api"')
  }
  const signIn = await app.inject({ method: 'POST', url: '/api/v1/session/', payload: { username: 'admin', password: 'not it' } })
  t.equal(signIn.statusCode, 401)
  t.ok(signIn.headers['www-authenticate'], 'a wrong password too')
})

t.test('/metrics with METRICS_TOKEN: 401 names Bearer', async (t) => {
  const { app } = await build(t, { METRICS_TOKEN: 'm'.repeat(20) })
  const res = await app.inject('/metrics')
  t.equal(res.statusCode, 401)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"')
  t.equal((await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${'m'.repeat(20)}` } })).statusCode, 200)
})

t.test('an Accept no representation meets is 406; one that any meets is served', async (t) => {
  const { app } = await build(t)
  for (const url of ['/api/v1/campaign/', '/api/v1/campaign/1/', '/', '/health/live', '/api/v1/']) {
    const res = await app.inject({ url, headers: { ...admin, accept: 'application/xml' } })
    t.equal(res.statusCode, 406, url)
    t.same(Object.keys(res.json()).sort(), ERROR_KEYS, "the API's Error shape")
    t.equal(res.json().code, 'NOT_ACCEPTABLE')
    t.ok(res.json().details.available.includes('application/json'), 'naming what it answers with')
  }
  const csv = await app.inject({ url: '/api/v1/campaign/', headers: { ...admin, accept: 'text/csv' } })
  t.equal(csv.statusCode, 200)
  t.match(csv.headers['content-type'], /^text\/csv/, 'a list serves CSV to Accept: text/csv')
  const browser = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
  t.equal((await app.inject({ url: '/api/v1/campaign/', headers: { ...admin, accept: browser } })).statusCode, 200, "a browser's Accept")
  t.equal((await app.inject({ url: '/api/v1/campaign/', headers: { ...admin, accept: 'application/*' } })).statusCode, 200)
  const exportAsJson = await app.inject({ url: '/api/v1/export_file/?dashboard_id=1&type=pdf', headers: { ...admin, accept: 'application/json' } })
  t.equal(exportAsJson.statusCode, 406, 'an export is a file, never JSON')
  t.ok(exportAsJson.json().details.available.includes('application/pdf'))
  t.equal(
    (await app.inject({ url: '/app/', headers: { accept: 'application/xml' } })).statusCode,
    200,
    'files the document does not describe are not negotiated',
  )
})

t.test('an authenticated answer varies by Cookie as well as Authorization', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ url: '/api/v1/campaign/', headers: admin })
  t.equal(res.statusCode, 200)
  t.same(String(res.headers.vary).split(/,\s*/).sort(), ['Accept', 'Accept-Encoding', 'Authorization', 'Cookie'])
  // Whatever the status: who asks and what they accept decide a 401, a 406 and who is signed in too.
  for (const [what, request, status] of [
    ['no credentials', { url: '/api/v1/campaign/' }, 401],
    ['a type the list is not', { url: '/api/v1/campaign/', headers: { ...admin, accept: 'image/png' } }, 406],
    ['nobody signed in', { url: '/api/v1/session/' }, 204],
  ] as const) {
    const answer = await app.inject(request)
    t.equal(answer.statusCode, status, what)
    t.same(String(answer.headers.vary).split(/,\s*/).sort(), ['Accept', 'Accept-Encoding', 'Authorization', 'Cookie'], `${what}: ${status} varies`)
  }
})

t.test('the OpenAPI document: /metrics, and a 4xx and a 2xx for every operation', async (t) => {
  const { app } = await build(t)
  const document = (await app.inject('/documentation/json')).json() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }
  t.ok(document.paths['/metrics']?.get, '/metrics is described')
  t.ok(document.paths['/metrics'].get.responses['401'], 'with its 401')
  let operations = 0
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (typeof operation !== 'object' || !operation.responses) continue
      operations++
      const statuses = Object.keys(operation.responses)
      if (!statuses.some((s) => s.startsWith('4'))) t.fail(`${method.toUpperCase()} ${path}: no 4xx`)
      if (!statuses.some((s) => s.startsWith('2'))) t.fail(`${method.toUpperCase()} ${path}: no 2xx`)
    }
  }
  t.ok(operations > 100, `${operations} operations checked`)
})
