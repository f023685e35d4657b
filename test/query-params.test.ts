// A resource's own query parameters are declared once (lib/api/query.ts): Fastify reads them on the
// list route before the handler runs, and nothing reads them again from the raw query string.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { admin, build, ROOT } from './helper.js'
import { client } from './api.js'
import { resources } from '../resources/index.js'
import { defineResource, type Resource } from '../lib/api/resource.js'
import { helpOf, joinParams, kindOf, LIST_PARAMS, Param, type QueryOf, type QuerySchema } from '../lib/api/query.js'
import { querystringSchema } from '../lib/api/openapi.js'
import { listParamsOf, parseListParams } from '../lib/api/list-params.js'
import { QueryParams } from '../lib/api/query-params.js'
import { CAMPAIGN_DATAPOINT_PARAMS } from '../lib/datapoints/campaign-reads.js'
import { DATE_DATAPOINT_PARAMS } from '../lib/datapoints/date-reads.js'

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
  const declared = new Set(resources.flatMap((resource) => [...resource.param_names.keys()]))
  t.ok(declared.has('location_depth') && declared.size > 20, `${declared.size} declared parameter names`)
  const rereads: string[] = []
  for (const file of [...tsFiles('lib'), ...tsFiles('plugins')]) {
    for (const [, name] of readFileSync(join(ROOT, file), 'utf8').matchAll(RAW_READ)) {
      if (declared.has(name)) rereads.push(`${file}: ${name}`)
    }
  }
  // A resource module may read by name what its own resources do not declare (a filter, e.g. source_submission's document_id).
  for (const file of tsFiles('resources')) {
    const own = new Set((await declaredIn(file)).flatMap((resource) => [...resource.param_names.keys()]))
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

t.test("hooks, modes and actions get ctx.params typed by their resource's declaration: no cast anywhere", async (t) => {
  const cast = /\bctx\.params\s+as\b/
  const root = readdirSync(ROOT).filter((name) => name.endsWith('.ts'))
  const files = [...root, ...['lib', 'plugins', 'resources', 'schemas', 'test', 'bench', 'classifier'].flatMap(tsFiles)]
  t.ok(files.length > 100, `${files.length} TypeScript files`)
  t.same(
    files.filter((file) => cast.test(readFileSync(join(ROOT, file), 'utf8'))),
    [],
    'the parameters are typed by the declaration (QueryOf), never asserted',
  )
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

t.test('each parameter of a route is declared once: a second declaration stops the start', async (t) => {
  const mode = (params: QuerySchema) => ({ params, when: () => false, read: async () => ({ rows: [], total: 0 }) })
  t.throws(
    () => defineResource({ name: 'twice', kind: 'non_model', params: { chart_type: Param.ignored() }, modes: [mode({ chart_type: Param.string('a mode') })] }),
    { message: 'twice: query parameter chart_type is declared twice' },
    "a mode's parameter that the resource declares too: neither silently wins",
  )
  t.throws(
    () => defineResource({ name: 'twice', kind: 'non_model', modes: [mode({ a: Param.integer('a') }), mode({ a: Param.integer('a') })] }),
    { message: 'twice: query parameter a is declared twice' },
    'two modes declaring one parameter',
  )
  t.throws(
    () => defineResource({ name: 'twice', kind: 'non_model', params: { limit: Param.integer('a limit of its own') } }),
    { message: 'twice: query parameter limit is declared twice (it is a reserved list parameter)' },
    'a reserved list parameter declared again',
  )
  t.throws(() => joinParams({ a: Param.integer('a') }, { b: Param.integer('b') }, { a: Param.string('a') }), { message: 'query parameter a is declared twice' })
  t.same(Object.keys(joinParams({ a: Param.integer('a') }, { b: Param.integer('b') })), ['a', 'b'], 'joined in declaration order')

  // The resources whose modes have parameters: what the declaration names and what each mode names, together, each once.
  const declared: Record<string, QuerySchema> = { campaign_datapoint: CAMPAIGN_DATAPOINT_PARAMS, date_datapoint: DATE_DATAPOINT_PARAMS }
  const withModes = resources.filter((resource) => resource.modes.some((mode) => mode.params))
  t.same(withModes.map((r) => r.name).sort(), Object.keys(declared).sort(), 'every resource whose modes have parameters is checked here')
  for (const resource of withModes) {
    const names = [...Object.keys(declared[resource.name]), ...resource.modes.flatMap((m) => Object.keys(m.params ?? {}))]
    t.same(
      names.filter((name, i) => names.indexOf(name) !== i),
      [],
      `${resource.name}: no parameter declared twice`,
    )
    t.same([...names].sort(), Object.keys(resource.params).sort(), `${resource.name}: its parameters are exactly those declarations`)
  }
  const campaign = resources.find((r) => r.name === 'campaign_datapoint')!
  const date = resources.find((r) => r.name === 'date_datapoint')!
  t.equal(
    campaign.params.chart_type,
    campaign.modes.find((m) => m.params?.chart_type)?.params?.chart_type,
    "campaign_datapoint's chart_type: the ColumnChart mode's",
  )
  t.equal(kindOf(date.params.chart_type), 'ignored', "date_datapoint's chart_type: accepted and ignored")
})

t.test('the reserved list parameters are declared once (LIST_PARAMS): the OpenAPI document shows them, the parser accepts what it shows', async (t) => {
  const { app } = await build(t)
  type Parameter = { in: string; name: string; schema: Record<string, unknown>; description?: string }
  const document = (await app.inject('/documentation/json')).json() as { paths: Record<string, { get?: { parameters: Parameter[] } }> }
  const json = (value: unknown) => JSON.parse(JSON.stringify(value))
  const lists = resources.filter((resource) => resource.methods.list.includes('GET'))
  t.ok(lists.length > 30, `${lists.length} list GETs`)
  for (const resource of lists) {
    const declared = listParamsOf(resource)
    // Each narrows LIST_PARAMS, nothing else: the same schemas, format's and shape's values a subset.
    for (const [name, schema] of Object.entries(declared)) {
      const { enum: allValues, ...full }: Record<string, unknown> = { ...LIST_PARAMS[name as keyof typeof LIST_PARAMS] }
      const { enum: values, ...rest }: Record<string, unknown> = { ...schema }
      t.same(json(rest), json(full), `${resource.name}: ${name} is LIST_PARAMS'`)
      if (values)
        t.ok(
          (values as string[]).every((v) => (allValues as string[]).includes(v)),
          `${resource.name}: ${name}'s values are LIST_PARAMS'`,
        )
    }
    // The document: a query parameter is its schema with the description beside it.
    const shown = Object.fromEntries(
      (document.paths[`/api/v1/${resource.name}/`].get?.parameters ?? [])
        .filter((p) => p.in === 'query' && p.name in LIST_PARAMS)
        .map((p) => [p.name, { ...p.schema, ...(p.description ? { description: p.description } : {}) }]),
    )
    t.same(shown, json(declared), `${resource.name}: the document's list parameters are listParamsOf's`)
    // The parser accepts exactly the values shown.
    const accepts = (query: string) => {
      try {
        parseListParams(resource, QueryParams.fromUrl(`/?${query}`), false)
        return true
      } catch {
        return false
      }
    }
    const formats = declared.format.enum
    for (const format of LIST_PARAMS.format.enum) t.equal(accepts(`format=${format}`), formats.includes(format), `${resource.name}: format=${format}`)
    const shapes = declared.shape?.enum ?? ['long']
    for (const shape of LIST_PARAMS.shape.enum)
      t.equal(accepts(`format=${formats.at(-1)}&shape=${shape}`), shapes.includes(shape), `${resource.name}: shape=${shape}`)
    t.notOk(accepts('format=xml') || accepts('limit=-1') || accepts('offset=x'), `${resource.name}: values outside the schemas refused`)
  }
})

t.test('a declared parameter may be required: refused when absent, typed as always there', async (t) => {
  const PARAMS = { campaign_id: Param.integer('the campaign', { required: true }), location_id: Param.integer('a location') }
  // The type a hook reads (checked by `npm run typecheck`): the required one is there, the other may not be.
  const typed: QueryOf<typeof PARAMS> = { campaign_id: 1 }
  const campaign: number = typed.campaign_id
  // @ts-expect-error a required parameter is never missing
  const missing: QueryOf<typeof PARAMS> = { location_id: 1 }
  t.same([campaign, missing], [1, { location_id: 1 }])

  const resource = defineResource({ name: 'checked', kind: 'non_model', params: PARAMS, action: async (ctx) => [{ campaign: ctx.params.campaign_id }] })
  t.same(resource.GET_params_required, ['campaign_id'], '/schema and OpenAPI name it required, as before')
  t.throws(() => resource.readQuery(QueryParams.fromUrl('/?location_id=2&campaign_id=')), { code: 'MISSING_REQUIRED_PARAMETER' }, 'empty is absent')
  t.same(resource.readQuery(QueryParams.fromUrl('/?campaign_id=3')), { campaign_id: 3 })

  t.throws(
    () => defineResource({ name: 'twice', kind: 'non_model', params: PARAMS, GET_params_required: ['campaign_id'] }),
    { message: 'twice: campaign_id is declared required and listed in GET_params_required' },
    'required said twice',
  )
  t.throws(
    () => defineResource({ name: 'by_id', schema: resources.find((r) => r.name === 'campaign')!.schema, params: PARAMS, required_unless_id: true }),
    { message: 'by_id: with required_unless_id, list campaign_id in GET_params_required, not as required parameters' },
    'a lookup by id would leave a required parameter absent',
  )
  // The resources that require a declared parameter say so on the parameter; GET_params_required names the rest.
  for (const name of ['campaign_datapoint', 'date_datapoint', 'validation_result', 'agg_refresh', 'transform_upload', 'date_doc_result']) {
    const declared = resources.find((r) => r.name === name)!
    t.ok(
      declared.GET_params_required.length && declared.GET_params_required.every((p) => p in declared.params),
      `${name}: requires ${declared.GET_params_required}, declared`,
    )
  }
})

t.test("campaign__in: campaign_datapoint's campaign set; elsewhere the first name of filter_campaign__in", async (t) => {
  const byName = (name: string) => resources.find((r) => r.name === name)!
  for (const name of ['location', 'geo', 'date_datapoint']) {
    const resource = byName(name)
    const read = (query: string) => resource.readQuery(QueryParams.fromUrl(`/?indicator__in=1&${query}`)) as Record<string, unknown>
    t.same(read('campaign__in=2,3').filter_campaign__in, [2, 3], `${name}: campaign__in is read as filter_campaign__in`)
    t.same(read('filter_campaign__in=2&campaign__in=3').filter_campaign__in, [2, 3], `${name}: both spellings, one parameter`)
    t.throws(
      () => read('campaign__in=x'),
      { message: 'Invalid value for campaign__in: "x" (expected comma-separated integers)' },
      `${name}: a bad value is named as the client wrote it`,
    )
    const properties = querystringSchema(resource).properties as Record<string, { description: string }>
    t.equal(properties.campaign__in.description, 'alias of filter_campaign__in', `${name}: the OpenAPI document names the alias`)
  }
  const campaign = byName('campaign_datapoint')
  t.notOk('filter_campaign__in' in campaign.params, 'campaign_datapoint: filter_indicator looks in C, no other campaigns')
  t.match(helpOf(campaign.params.campaign__in), /^the campaigns read \(C\)/, 'campaign_datapoint: campaign__in is C')
  t.throws(
    () => joinParams({ a: Param.integer('a', { alias: 'b' }) }, { b: Param.integer('b') }),
    { message: 'query parameter b is declared twice' },
    'an alias is a declared name',
  )
})
