// A resource's own query parameters are declared once (lib/api/query.ts): Fastify reads them on the
// list route before the handler runs, and nothing reads them again from the raw query string.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { admin, build, ROOT } from './helper.js'
import { client } from './api.js'
import { resources } from '../resources/index.js'
import type { Resource } from '../lib/api/resource.js'

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  )
}

/** `query.last('name')`, `.all`, `.list`, `.has`: reading a parameter by name from the raw query. */
const RAW_READ = /\bquery\.(?:last|all|list|has)\(\s*'([a-z_]+)'/g

/** The resources a module under resources/ declares (its exports that are resources). */
async function declaredIn(file: string): Promise<Resource[]> {
  const module = (await import(join(ROOT, file))) as Record<string, unknown>
  return Object.values(module).filter((value): value is Resource => resources.includes(value as Resource))
}

t.test('no declared parameter is read again from the raw query: lib/api/query.ts is their one parser', async (t) => {
  const declared = new Set(resources.flatMap((resource) => Object.keys(resource.params)))
  t.ok(declared.has('location_depth') && declared.size > 20, `${declared.size} declared parameter names`)
  const rereads: string[] = []
  for (const file of [...tsFiles('lib'), ...tsFiles('plugins')]) {
    for (const [, name] of readFileSync(join(ROOT, file), 'utf8').matchAll(RAW_READ)) {
      if (declared.has(name)) rereads.push(`${file}: ${name}`)
    }
  }
  // A resource module may read by name what its own resources do not declare (a filter, e.g. source_submission's document_id).
  for (const file of tsFiles('resources')) {
    const own = new Set((await declaredIn(file)).flatMap((resource) => Object.keys(resource.params)))
    for (const [, name] of readFileSync(join(ROOT, file), 'utf8').matchAll(RAW_READ)) {
      if (own.has(name)) rereads.push(`${file}: ${name}`)
    }
  }
  t.same(rereads, [], 'no second reading of a declared parameter')
  // location_depth: its typed value is used by the location selection alone.
  const users = [...tsFiles('lib'), ...tsFiles('resources'), ...tsFiles('plugins')].filter((file) =>
    /\.location_depth\b/.test(readFileSync(join(ROOT, file), 'utf8')),
  )
  t.same(users, ['lib/datapoints/location-selection.ts'], 'location_depth is read by the location selection alone')
})

t.test('Fastify refuses a bad declared parameter before the handler runs, with the 400 the API gives', async (t) => {
  let handled = 0
  const { app } = await build(t, {}, (app) =>
    app.addHook('preHandler', async (request) => {
      if (request.url.startsWith('/api/v1/campaign_datapoint/')) handled++
    }),
  )
  const api = client(app)
  const bad = await api.get('/campaign_datapoint/?indicator__in=1&location_id=1&location_depth=deep', admin)
  t.equal(bad.status, 400)
  t.match(
    bad.body,
    {
      statusCode: 400,
      error: 'Bad Request',
      code: 'INVALID_VALUE',
      message: 'Invalid value for location_depth: "deep" (expected integer)',
      request_id: String,
    },
    "the API's error envelope, as the handler's own check gave it",
  )
  t.notOk('stack' in bad.body || 'validation' in bad.body, 'nothing of Fastify’s validation leaks')
  t.equal(handled, 0, 'the handler never ran (nor its preHandler hooks)')
  t.equal((await api.get('/campaign_datapoint/?indicator__in=1&location_id=1&location_depth=2&location_depth=3', admin)).body.code, 'DUPLICATE_PARAMETER')
  t.equal((await api.get('/campaign_datapoint/?location_depth=1', admin)).body.code, 'MISSING_REQUIRED_PARAMETER', 'a missing one first')
  t.equal(handled, 0)

  const ignored = await api.get('/campaign_datapoint/?indicator__in=1&cumulative=0&cumulative=1&source_name=a&source_name=b', admin)
  t.equal(ignored.status, 200, 'a parameter accepted and ignored takes any values, repeated ones too')
  handled--
  const good = await api.get('/campaign_datapoint/?indicator__in=1&location_id=1&location_depth=1&location_depth=', admin)
  t.equal(good.status, 200, 'an empty value is "not given"; the same value twice is one')
  t.equal(handled, 1, 'a good request reaches the handler')
})

t.test('the handler gets the declared parameters typed: lists concatenated, empty items dropped, dates normalised', async (t) => {
  const seen: Array<Record<string, unknown>> = []
  const { app } = await build(t, {}, (app) =>
    app.addHook('preHandler', async (request) => {
      if (request.url.startsWith('/api/v1/campaign_datapoint/')) seen.push({ ...(request.query as Record<string, unknown>) })
    }),
  )
  const response = await client(app).get('/campaign_datapoint/?indicator__in=3,1,&indicator__in=2&campaign_start=2016-1-5&location_type=&limit=5', admin)
  t.equal(response.status, 200)
  t.same(seen, [{ indicator__in: [3, 1, 2], campaign_start: '2016-01-05' }], 'typed, the reserved and empty ones left out')
})
