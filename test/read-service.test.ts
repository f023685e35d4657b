// The read service (lib/api/read-service.ts): a read made of other reads (a dashboard's data, a shared
// link, an export) gets, for every role, the bytes the route sends that user, the route's status and
// error for a client's mistake, and shares the route's read cache.
import t, { type Test } from 'tap'
import { cacheLookups } from '../lib/core/metrics.js'
import { findUserById } from '../lib/data/auth.js'
import { admin, alice, build, eventually } from './helper.js'
import { client } from './api.js'
import { bob, dashboardOf, erin, moreUsers, world } from './world.js'

/** The app's read-cache hits so far (a process-wide counter: read by difference). */
const readHits = async () => (await cacheLookups.get()).values.find((v) => v.labels.cache === 'read' && v.labels.result === 'hit')?.value ?? 0

/** The world, a dashboard over it, and each role's user with the headers its key sends. */
async function setup(t: Test, config = {}) {
  const harness = await build(t, config)
  const api = client(harness.app)
  const w = await world(api)
  const dashboard = await dashboardOf(api, w)
  const { erinId, bobId } = await moreUsers(harness.db)
  t.equal((await api.post('/location_responsibility/', { user_id: harness.aliceId, top_lvl_location_id: w.A })).status, 201)
  const roles = [
    ['a superuser', harness.adminId, admin],
    ['a user restricted to province A', harness.aliceId, alice],
    ['a metadata editor', erinId, erin],
    ['a plain user', bobId, bob],
  ] as const
  const users = await Promise.all(roles.map(async ([role, id, headers]) => ({ role, headers, user: (await findUserById(harness.db, id))! })))
  const paths = [
    '/campaign/',
    '/indicator/?fields=id,name&order_by=-id',
    `/location/?parent_location_id=${w.R}`,
    `/location/${w.a1}/`,
    `/location/${w.b1}/`,
    `/campaign_datapoint/?indicator__in=${w.n}&campaign__in=${w.C}&location_id=${w.R}&location_depth=2&chart_type=ColumnChart&with_coverage=1&limit=0`,
    `/date_datapoint/?indicator__in=${w.cases}&location_id=${w.R}&group_by_time=month`,
    `/datapoint_history/?indicator_id=${w.n}`,
    `/custom_chart/${dashboard.provinces}/`,
    `/dashboard/${dashboard.id}/`,
    `/dashboard/${dashboard.id}/data/?campaign=${w.C}`,
    `/dashboard/${dashboard.id}/data/?location=${w.B}`,
    '/all_meta/',
    '/api_key/',
    // A client's mistakes: a bad id, a missing row, an unknown resource, a bad parameter, a bad filter.
    '/campaign/abc/',
    '/campaign/99999/',
    '/no_such_thing/',
    '/indicator/?limit=x',
    '/indicator/?no_such_field=1',
    '/dashboard/99999/data/',
  ]
  return { ...harness, users, paths, w, dashboard }
}

/** The route's answer to `headers`' user, as sent. */
async function viaRoute(app: Awaited<ReturnType<typeof build>>['app'], path: string, headers: Record<string, string>) {
  const res = await app.inject({ method: 'GET', url: `/api/v1${path}`, headers })
  return { status: res.statusCode, payload: res.payload }
}

/** An error's body without its request id (each answer has its own). */
const withoutRequestId = (payload: string) => {
  const { request_id: _id, ...rest } = JSON.parse(payload)
  return rest
}

t.test('with no cache, the service computes the bytes the route computes, for every role and every kind of read', async (t) => {
  const { app, users, paths, w, dashboard } = await setup(t, { READ_CACHE_BYTES: 0, DETAIL_CACHE_BYTES: 0 })
  for (const { role, headers, user } of users) {
    const read = app.reads.rawReader(user)
    for (const path of paths) {
      const [inner, route] = [await read(path), await viaRoute(app, path, headers)]
      t.equal(inner.status, route.status, `${role}: ${path} → ${route.status}`)
      if (route.status === 200) t.equal(inner.payload, route.payload, `${role}: ${path}, the same bytes`)
      else t.same(withoutRequestId(inner.payload), withoutRequestId(route.payload), `${role}: ${path}, the same error`)
    }
  }
  // What a restricted user may not see stays out of her inner reads.
  const alice = users.find((u) => u.role.includes('restricted'))!
  t.equal((await app.reads.rawReader(alice.user)(paths[4])).status, 404, "province B's district is not hers")
  const data = JSON.parse((await app.reads.rawReader(alice.user)(`/dashboard/${dashboard.id}/data/`)).payload)
  const seen = Object.values(data.charts as Record<string, { objects?: Array<{ location_id: number }> }>).flatMap((chart) => chart.objects ?? [])
  t.ok(seen.length > 0, "her dashboard's data holds rows")
  t.same(
    [...new Set(seen.map((row) => row.location_id))].filter((id) => ![w.A, w.a1].includes(id)),
    [],
    'every row of her dashboard data, read through the service, lies in province A',
  )
})

t.test('the service and the route share the read cache: what one kept, the other serves', async (t) => {
  const { app, users, paths } = await setup(t)
  for (const { role, headers, user } of users) {
    const lists = paths.filter((path) => !/\/\d+\/$/.test(path.split('?')[0]))
    for (const path of lists) {
      // Kept by the service, then asked of the route; again while a change notified by the setup's
      // writes (on PostgreSQL, heard a moment later) drops what was kept in between.
      const { inner, route, hits } = await eventually(
        async () => {
          const inner = await app.reads.rawReader(user)(path)
          const before = await readHits()
          const route = await viaRoute(app, path, headers)
          return { inner, route, hits: (await readHits()) - before }
        },
        ({ inner, hits }) => inner.status !== 200 || hits === 1,
      )
      if (inner.status !== 200) continue
      t.equal(route.payload, inner.payload, `${role}: ${path}`)
      t.equal(hits, 1, `${role}: ${path}, the route served what the service kept`)
    }
  }
})
