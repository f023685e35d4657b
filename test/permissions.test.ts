// resource-api §6: a user responsible for one province sees nothing of its sibling (or of the root
// above it) from any read resource, whatever location parameters are sent; writes outside are 403,
// detail reads outside are 404.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { sql } from 'kysely'
import { build, alice } from './helper.js'
import { client } from './api.js'
import { bob, erin, moreUsers, upload, world } from './world.js'
import { resources } from '../resources/index.js'
import type { Resource } from '../lib/api/resource.js'

type Row = Record<string, unknown>

t.test('a user responsible for province A gets nothing of province B or the root', async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  const w = await world(api)
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  const asAlice = client(app, alice)
  const permitted = new Set([w.A, w.a1])

  const selections = [
    '',
    `location_id=${w.B}`,
    `location_id=${w.B}&location_depth=1`,
    `location_id__in=${w.B},${w.b1}`,
    `location_id__in=${w.B},${w.b1},${w.a1}`,
    `location_id=${w.R}`,
    `location_id=${w.R}&location_depth=1`,
    `location_id=${w.R}&location_depth=2`,
    `location_id=${w.R}&location_type=District`,
    `location_id=${w.R}&location_depth=2&filter_indicator=LPD&filter_value=1`,
    `filter_indicator=LPD&filter_value=1&campaign__in=${w.C}`,
  ]
  const reads: Array<[string, string]> = [
    [`/campaign_datapoint/?indicator__in=${w.n},${w.lpd}&campaign__in=${w.C}`, 'location_id'],
    [`/campaign_datapoint/?indicator__in=${w.n},${w.lpd}&campaign__in=${w.C}&chart_type=ColumnChart`, 'location_id'],
    [`/date_datapoint/?indicator__in=${w.cases}`, 'location_id'],
    [`/date_datapoint/?indicator__in=${w.cases}&group_by_time=year`, 'location_id'],
    [`/date_datapoint/?indicator__in=${w.cases}&group_by_time=all_time`, 'location_id'],
    [`/doc_datapoint/?document_id=${w.campaignDoc}`, 'location_id'],
    [`/date_doc_result/?document_id=${w.dateDoc}`, 'location_id'],
    [`/campaign_doc_result/?document_id=${w.campaignDoc}`, 'location_id'],
    ['/geo/?', 'location_id'],
    ['/location/?', 'id'],
  ]
  let requests = 0
  let rowsSeen = 0
  for (const [url, column] of reads) {
    for (const selection of selections) {
      const res = await asAlice.get(`${url}${url.endsWith('?') ? '' : '&'}${selection}`)
      requests++
      // doc_datapoint and the document results take location_id / location_id__in as plain filters
      // and refuse the selection-only parameters: a refusal shows nothing either.
      if (res.status === 400 && res.body.code === 'UNKNOWN_FILTER' && url.includes('document_id')) continue
      if (res.status !== 200) {
        t.fail(`${url} ${selection}: ${res.status} ${res.text}`)
        continue
      }
      const outside = (res.body.objects as Row[]).filter((o) => !permitted.has(o[column] as number))
      rowsSeen += res.body.objects.length
      if (outside.length) t.fail(`${url} ${selection}: rows outside the subtree ${JSON.stringify(outside)}`)
      const metaOutside = ((res.body.meta.location_ids ?? []) as number[]).filter((l) => !permitted.has(l))
      if (metaOutside.length) t.fail(`${url} ${selection}: meta.location_ids outside ${metaOutside}`)
    }
  }
  t.pass(`${requests} reads, ${rowsSeen} rows, none outside A's subtree`)
  t.ok(rowsSeen > 0, 'the reads do return the permitted rows')

  // The same reads as the admin do reach B: the matrix is not empty by accident.
  const adminB = await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id=${w.B}`)
  t.same(
    adminB.body.objects.map((o: Row) => o.value),
    [5],
  )
  t.same(
    (await asAlice.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id=${w.R}&location_depth=2`)).body.objects.map((o: Row) => [
      o.location_id,
      o.value,
    ]),
    [[w.a1, 10]],
  )
  // Grouped date sums only count the permitted descendants: A gets a1's case, not b1's.
  t.same(
    (await asAlice.get(`/date_datapoint/?indicator__in=${w.cases}&group_by_time=all_time`)).body.objects.map((o: Row) => [o.location_id, o.value]),
    [[w.A, 1]],
  )

  // CSV exports (long and wide) go through the same reads.
  for (const url of [
    `/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&format=csv`,
    `/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&format=csv&shape=wide`,
    `/date_datapoint/?indicator__in=${w.cases}&format=csv&shape=wide&group_by_time=year&location_id=${w.R}&location_depth=1`,
  ]) {
    const csv = await asAlice.get(url)
    t.equal(csv.status, 200)
    t.notMatch(csv.text, /\bb1\b|\bB\b|(^|\n)R,/, `${url}: nothing of B`)
  }

  // Detail reads outside are 404; writes outside are 403 LOCATION_FORBIDDEN; inside they work.
  const bRow = (await api.get(`/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id__in=${w.b1}`)).body.objects[0]
  t.equal((await asAlice.get(`/campaign_datapoint/${bRow.id}/`)).status, 404)
  t.equal((await asAlice.patch(`/campaign_datapoint/${bRow.id}/`, { value: 0 })).status, 404)
  const bDate = (await api.get(`/date_datapoint/?indicator__in=${w.cases}&location_id__in=${w.b1}`)).body.objects[0]
  t.equal((await asAlice.get(`/date_datapoint/${bDate.id}/`)).status, 404)
  t.equal((await asAlice.get(`/location/${w.B}/`)).status, 404)
  const forbidden = await asAlice.post('/campaign_datapoint/', { indicator_id: w.lpd, location_id: w.R, campaign_id: w.C, value: 1 })
  t.equal(forbidden.status, 403)
  t.equal(forbidden.body.code, 'LOCATION_FORBIDDEN')
  t.equal(forbidden.body.message, `Location ${w.R} is outside your responsibility`)
  t.equal((await asAlice.post('/date_datapoint/', { indicator_id: w.cases, location_id: w.b1, data_date: '2016-01-01', value: 1 })).status, 403)
  const aDate = (await asAlice.get(`/date_datapoint/?indicator__in=${w.cases}&location_id__in=${w.a1}`)).body.objects[0]
  t.equal((await asAlice.patch(`/date_datapoint/${aDate.id}/`, { location_id: w.b1 })).status, 403, 'nor move a row out')
  // Her province read and sent back whole: its parent, the root outside her reach, is given as it is, not moved to.
  const province = (await asAlice.get(`/location/${w.A}/`)).body
  const resent = await asAlice.patch(`/location/${w.A}/`, { name: province.name, parent_location_id: province.parent_location_id })
  t.equal(resent.status, 200, `her province sent back unchanged: ${resent.text}`)
  t.equal((await asAlice.patch(`/location/${w.A}/`, { parent_location_id: w.B })).status, 403, 'a move out of her reach is still refused')
  const newRoot = await asAlice.post('/location/', {
    name: 'Elsewhere',
    location_code: 'ELSEWHERE',
    location_type_id: province.location_type_id,
    parent_location_id: null,
  })
  t.equal(newRoot.status, 403)
  t.equal(newRoot.body.message, 'The top of the tree (no parent) is outside your responsibility', 'never a new root, said so')
  t.equal((await asAlice.post('/date_datapoint/', { indicator_id: w.cases, location_id: w.a1, data_date: '2016-01-01', value: 1 })).status, 201)
  t.equal((await asAlice.delete(`/date_datapoint/${aDate.id}/`)).status, 403, 'only superusers delete')
})

/** Role letters of SECURITY.md's table: superuser, metadata editor, restricted user, plain user. */
type Role = 'S' | 'E' | 'R' | 'U'
const ROLES: Role[] = ['S', 'E', 'R', 'U']

/**
 * SECURITY.md's "Who may do what" table: resource → the roles that may write it (POST, PATCH) or run
 * it, or null for read-only resources. The test holds the server to the document.
 */
function documentedWriters(): Map<string, Set<Role> | null> {
  const text = readFileSync(new URL('../SECURITY.md', import.meta.url), 'utf8')
  const section = text.slice(text.indexOf('## Who may do what'))
  const writers = new Map<string, Set<Role> | null>()
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim())
    if (cells.length < 5 || !cells[1].startsWith('`')) continue
    // Parenthesised remarks qualify the roles listed before them; they never add one.
    const write = cells[3].replace(/\([^)]*\)/g, '')
    const roles = write === '–' ? null : new Set((write.match(/\b[SERU]\b/g) ?? []) as Role[])
    for (const [, name] of cells[1].matchAll(/`([a-z_]+)`/g)) writers.set(name, roles)
  }
  return writers
}

t.test('access-control matrix: every resource and method for each role (SECURITY.md), anonymous and a wrong key', async (t) => {
  // Hundreds of wrong keys from one address would (rightly) lock it out: test/protection.test.ts.
  const { app, adminId, aliceId, db } = await build(t, { AUTH_FAILURE_MAX: 100_000 })
  const api = client(app)
  const w = await world(api)
  const { erinId, bobId } = await moreUsers(db)
  t.equal((await api.post('/location_responsibility/', { user_id: aliceId, top_lvl_location_id: w.A })).status, 201)
  // A row in every other resource too, so each one has a detail to read and delete.
  const created = async (path: string, body: Row, headers?: Record<string, string>) => {
    const res = await api.post(path, body, headers)
    if (res.status !== 201) throw new Error(`${path}: ${res.text}`)
    return res.body.id as number
  }
  const tag = await created('/indicator_tag/', { tag_name: 'Polio' })
  await created('/indicator_to_tag/', { indicator_id: w.n, indicator_tag_id: tag })
  await created('/calculated_indicator_component/', { indicator_id: w.cases, indicator_component_id: w.n, calculation: 'PART_TO_BE_SUMMED' })
  await created('/custom_chart/', { uuid: 'chart-1', title: 'chart', chart_json: { type: 'table' } })
  await created('/dashboard/', { title: 'board' })
  await created('/user_group/', { user_id: aliceId, group_id: await created('/group/', { name: 'viewers' }) })
  // Alice's own document, with a detail: what she may change and process.
  const own = await upload(api, 'alice.csv', 'campaign', 'campaign,geocode,n\nC,a1,11\n', alice)
  t.equal(own.run.status, 200, 'alice runs transform_upload on her own document')
  const statusType = await created('/doc_detail_type/', { name: 'status' })
  const ownDetail = await created('/doc_detail/', { doc_detail_type_id: statusType, document_id: own.id, doc_detail_value: 'ok' })
  await created('/doc_detail/', { doc_detail_type_id: statusType, document_id: w.campaignDoc, doc_detail_value: 'ok' })

  const as: Record<Role, ReturnType<typeof client>> = { S: api, E: client(app, erin), R: client(app, alice), U: client(app, bob) }
  const userIds: Record<Role, number> = { S: adminId, E: erinId, R: aliceId, U: bobId }
  const permitted = new Set([w.A, w.a1])
  const params: Record<string, number> = { indicator__in: w.n, campaign__in: w.C, document_id: own.id, campaign_id: w.C, user_id: aliceId }
  const listUrl = (r: Resource) => `/api/v1/${r.name}/?${r.GET_params_required.map((p) => `${p}=${params[p]}`).join('&')}`
  const firstRow = async (r: Resource) => withId(r, (await api.get(listUrl(r))).body.objects?.[0] as Row | undefined)
  // geo's list shows features by location; its rows (polygons) have their own ids.
  const withId = async (r: Resource, row: Row | undefined) =>
    row && row.id === undefined
      ? { ...row, id: (await sql<{ id: number }>`select id from ${sql.table(r.table!)} where location_id = ${row.location_id}`.execute(db)).rows[0].id }
      : row
  const outside = (r: Resource, row: Row) => r.location_column !== undefined && !permitted.has(row[r.location_column] as number)
  const documented = documentedWriters()
  let checked = 0

  for (const r of resources) {
    t.ok(documented.has(r.name), `SECURITY.md names ${r.name}`)
    const writers = documented.get(r.name) ?? null
    t.equal(writers === null, r.kind === 'model' && !r.methods.list.includes('POST'), `${r.name}: SECURITY.md lists writers exactly when it can be written`)
    // Alice's own document (and its detail) is the row every role changes: the document rules are tested apart.
    const row = r.kind !== 'model' ? undefined : r.name === 'document' ? { id: own.id } : r.name === 'doc_detail' ? { id: ownDetail } : await firstRow(r)
    const detail = `/api/v1/${r.name}/${row ? row.id : 1}/`
    const requests: Array<[string, string]> = [
      ['GET', listUrl(r)],
      ['GET', `/api/v1/${r.name}/schema/`],
      ['POST', `/api/v1/${r.name}/`],
      ['PUT', detail],
      ['PATCH', detail],
      ['DELETE', detail],
      ['GET', detail],
    ]
    for (const [method, url] of requests) {
      for (const [who, headers] of [
        ['anonymous', {}],
        ['a wrong key', { authorization: `Bearer ${'0'.repeat(40)}` }],
      ] as const) {
        const res = await app.inject({ method: method as 'GET', url, headers, payload: method === 'GET' ? undefined : {} })
        t.equal(res.statusCode, 401, `${who}: ${method} ${url}`)
        checked++
      }
    }

    for (const role of ROLES) {
      const user = as[role]
      const may = writers?.has(role) ?? false
      const refused = (status: number, body: Row | undefined) => status === 403 && body?.code === 'FORBIDDEN'
      t.equal((await user.get(`/api/v1/${r.name}/schema/`)).status, 200, `${role}: ${r.name} schema`)
      checked++
      if (r.kind === 'non_model') {
        const run = await user.get(listUrl(r))
        t.equal(run.status, may ? 200 : 403, `${role}: run ${r.name}`, run.status === 200 || run.status === 403 ? {} : { body: run.text })
        if (!may) t.match(run.body.message, new RegExp(`^Only .+ may run ${r.name}$`))
        checked++
        continue
      }
      // Reads: every role lists; a restricted user sees nothing outside the subtree and gets 404 for a row there.
      // Responsibilities (alice's, here) and keys are read by a superuser and by their own user only.
      const ownedBy = (row: Row | undefined) => (r.name === 'location_responsibility' || r.name === 'api_key' ? row?.user_id : undefined)
      const notTheirs = role !== 'S' && row !== undefined && ownedBy(row) !== undefined && ownedBy(row) !== userIds[role]
      const list = await user.get(listUrl(r))
      t.equal(list.status, r.name === 'location_responsibility' && notTheirs ? 403 : 200, `${role}: ${r.name} list`)
      if (role !== 'S')
        t.same(
          ((list.body.objects ?? []) as Row[]).filter((o) => ownedBy(o) !== undefined && ownedBy(o) !== userIds[role]),
          [],
          `${role}: ${r.name} lists their own only`,
        )
      if (role === 'R')
        t.same(
          ((list.body.objects ?? []) as Row[]).filter((o) => outside(r, o)),
          [],
          `R: ${r.name} list holds nothing outside A`,
        )
      if (row) {
        const read = await user.get(detail)
        const hidden = (role === 'R' && outside(r, row)) || notTheirs
        t.equal(read.status, hidden ? 404 : 200, `${role}: ${r.name} detail`)
        checked++
      }
      checked++
      if (writers === null) continue
      // Writes: a role that may not write is refused before anything is read; one that may gets past
      // that check (its empty body may still be refused for what it lacks).
      const post = await user.post(`/api/v1/${r.name}/`, {})
      t.equal(refused(post.status, post.body), !may, `${role}: POST ${r.name} ${may ? 'passes the role check' : 'is refused'}`, {
        status: post.status,
        body: post.text,
      })
      if (!may) t.match(post.body.message, new RegExp(`^Only .+ may modify ${r.name}$`))
      if (row && r.methods.detail.includes('PATCH')) {
        const patch = await user.patch(detail, {})
        t.equal(refused(patch.status, patch.body), !may, `${role}: PATCH ${r.name} ${may ? 'passes the role check' : 'is refused'}`, {
          status: patch.status,
          body: patch.text,
        })
        // Rows with an owner (the superuser's, here) are deleted by their owner and metadata editors
        // too (test/hardening.test.ts); everything else by superusers only.
        if (role !== 'S' && !(r.owner_column && role === 'E')) {
          const denied = await user.delete(detail)
          t.equal(denied.status, 403, `${role}: DELETE ${r.name}`)
          t.equal(denied.body.code, r.owner_column ? 'OWNER_FORBIDDEN' : 'FORBIDDEN')
          if (!r.owner_column) t.equal(denied.body.message, 'Only a superuser may delete')
        }
      }
      checked += 3
    }
  }

  // The superuser deletes a row of every model resource that still has one (cascades may have taken some).
  let deleted = 0
  // Dependents first; the last row, so that `admin` (the first user) stays.
  for (const r of resources.filter((r) => r.kind === 'model' && r.methods.detail.includes('DELETE')).reverse()) {
    const list = await api.get(listUrl(r))
    t.equal(list.status, 200, `admin: ${r.name} list before the delete`)
    const rows = await Promise.all(((list.body.objects ?? []) as Row[]).map((o) => withId(r, o)))
    const row = rows.sort((a, b) => Number(b!.id) - Number(a!.id))[0]
    if (!row) {
      t.comment(`${r.name}: no row left`)
      continue
    }
    const res = await api.delete(`/api/v1/${r.name}/${row.id}/?cascade=true`)
    if (r.name === 'location_responsibility') {
      // Alice's only responsibility: deleting it would widen her to every location (test/hardening.test.ts).
      t.equal(res.status, 409, `admin: DELETE ${r.name}/${row.id} is refused`)
      continue
    }
    t.equal(res.status, 204, `admin: DELETE ${r.name}/${row.id}`, res.status === 204 ? {} : { body: res.text })
    deleted++
  }
  t.ok(deleted >= 19, `the superuser deleted rows of ${deleted} resources`)
  t.ok(checked > 700, `${checked} access checks`)
})
