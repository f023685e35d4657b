// The original front-end's paths at the root (plugins/original-paths.ts): its export form
// `/export_file/?type=…&path=…` leads to the API's export with the same query, and the file comes
// back once the redirect is followed with credentials.
import t from 'tap'
import { admin, build } from './helper.js'
import { loadDemoData } from '../lib/engine/demo.js'

t.test('GET /export_file/ at the root: 308 to /api/v1/export_file/ with its query, which answers the file', async (t) => {
  const { app, db } = await build(t)
  await loadDemoData(db)
  const dashboard = (await app.inject({ url: '/api/v1/dashboard/?limit=1', headers: admin })).json().objects[0] as { id: number }
  const query = `?type=svg&path=${encodeURIComponent(`/app/#/dashboard/${dashboard.id}?location=1`)}`

  const moved = await app.inject({ url: `/export_file/${query}`, headers: admin })
  t.equal(moved.statusCode, 308, 'a permanent redirect, kept a GET')
  t.equal(moved.headers.location, `/api/v1/export_file/${query}`, 'to the API route, the query as sent')
  t.equal((await app.inject({ url: `/export_file${query}` })).headers.location, `/api/v1/export_file/${query}`, 'without the trailing slash too')
  t.equal((await app.inject('/export_file/')).headers.location, '/api/v1/export_file/', 'no query: none added')

  const followed = await app.inject({ url: moved.headers.location as string, headers: admin })
  t.equal(followed.statusCode, 200)
  t.match(followed.headers['content-type'], /^image\/svg\+xml/)
  t.match(followed.body, /^<svg|^<\?xml/)
  t.equal((await app.inject({ url: moved.headers.location as string })).statusCode, 401, 'the route itself asks for credentials')
})
