// Sign-in for people (plugins/session.ts, lib/data/sessions.ts): passwords, the session cookie, the
// CSRF rule of cookie-authenticated changes, sign-out and the ways a session ends, on both engines.
import t from 'tap'
import { sql } from 'kysely'
import { admin, alice, build, eventually } from './helper.js'
import { PURGE_SESSIONS } from '../plugins/jobs.js'
import { client } from './api.js'
import { runCommand } from '../cli/commands.js'

const PASSWORD = 'correct horse battery'
const SAME_ORIGIN = 'http://localhost:80'

type App = Awaited<ReturnType<typeof build>>['app']

async function signIn(app: App, username: string, password: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/api/v1/session/', payload: { username, password }, headers })
}

/** The cookie pair (`name=value`) of a sign-in's Set-Cookie. */
const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie']).split(';')[0]

t.test('a password signs in: the cookie is HttpOnly and SameSite=Lax, and authenticates like a key', async (t) => {
  const { app, aliceId } = await build(t)
  const api = client(app)
  t.equal((await api.patch(`/user/${aliceId}/`, { password: PASSWORD })).status, 200)
  const shown = await api.get(`/user/${aliceId}/`)
  t.notOk('password' in shown.body || 'password_hash' in shown.body, 'the password is never shown')
  t.notMatch((await api.get('/user/?format=csv')).text, /scrypt/, 'nor in an export')

  const wrong = await signIn(app, 'alice', 'not her password')
  t.equal(wrong.statusCode, 401)
  t.match(wrong.json(), { code: 'INVALID_CREDENTIALS', message: 'Wrong username or password' })
  t.notOk(wrong.headers['set-cookie'], 'no session')
  t.equal((await signIn(app, 'nobody', PASSWORD)).statusCode, 401, 'an unknown user reads the same')

  const right = await signIn(app, 'alice', PASSWORD)
  t.equal(right.statusCode, 200, right.body)
  t.match(right.json(), { id: aliceId, username: 'alice', via: 'session' })
  const setCookie = String(right.headers['set-cookie'])
  t.match(setCookie, /^rhizome_session=[\w-]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/)
  const cookie = cookieOf(right)
  const who = await app.inject({ url: '/api/v1/session/', headers: { cookie } })
  t.match(who.json(), { username: 'alice', via: 'session' })
  t.equal((await app.inject({ url: '/api/v1/campaign/', headers: { cookie } })).statusCode, 200, 'every /api/v1 route takes the cookie')
  t.match((await app.inject({ url: '/api/v1/session/', headers: admin })).json(), { username: 'admin', via: 'key' })
  const nobody = await app.inject({ url: '/api/v1/session/' })
  t.equal(nobody.statusCode, 204, 'nobody signed in: 204, not an error a browser would log')
  t.equal(nobody.body, '')
  t.equal((await app.inject({ url: '/api/v1/session/', headers: { authorization: `ApiKey admin:${'0'.repeat(40)}` } })).statusCode, 401, 'a wrong key is 401')
  const stored = await sql<{ token_hash: string }>`select token_hash from user_session`.execute(app.db.db)
  t.notOk(
    stored.rows.some((r) => cookie.includes(r.token_hash)),
    'the database holds the token hash only',
  )

  const form = await app.inject({
    method: 'POST',
    url: '/api/v1/session/',
    payload: `username=alice&password=${encodeURIComponent(PASSWORD)}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  t.equal(form.statusCode, 200, 'a form signs in too')
  t.equal((await api.patch(`/user/${aliceId}/`, { password: 'short' })).status, 400, 'a password of fewer than 10 characters is refused')
})

t.test('a change made with the cookie must come from this origin; sign-out ends the session', async (t) => {
  const { app, adminId } = await build(t)
  await client(app).patch(`/user/${adminId}/`, { password: PASSWORD })
  const cookie = cookieOf(await signIn(app, 'admin', PASSWORD))
  const post = (headers: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/api/v1/campaign_type/', payload: { name: `NID ${Math.random()}` }, headers: { cookie, ...headers } })
  const noOrigin = await post({})
  t.equal(noOrigin.statusCode, 403)
  t.equal(noOrigin.json().code, 'CROSS_SITE_REFUSED')
  t.equal((await post({ origin: 'https://evil.example' })).statusCode, 403, 'another site')
  t.equal((await post({ referer: 'https://evil.example/page' })).statusCode, 403, 'another site by Referer')
  const crossSiteForm = await app.inject({
    method: 'POST',
    url: '/api/v1/campaign_type/',
    payload: 'name=forged',
    headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
  })
  t.equal(crossSiteForm.statusCode, 403, 'a cross-site form post with the cookie')
  t.equal((await client(app).get('/campaign_type/?name=forged')).body.objects.length, 0, 'wrote nothing')
  t.equal((await post({ origin: SAME_ORIGIN })).statusCode, 201, 'from this origin')
  t.equal((await post({ referer: `${SAME_ORIGIN}/app/` })).statusCode, 201, 'or a page of it')

  // The pipeline's steps are GETs: a link on another site must not run one with the cookie.
  const step = '/api/v1/agg_refresh/?campaign_id=999'
  const crossSiteLink = await app.inject({ url: step, headers: { cookie, 'sec-fetch-site': 'cross-site' } })
  t.equal(crossSiteLink.statusCode, 403, 'a step linked from another site')
  t.equal(crossSiteLink.json().code, 'CROSS_SITE_REFUSED')
  t.equal((await app.inject({ url: step, headers: { cookie, 'sec-fetch-site': 'same-site' } })).statusCode, 403, 'or from a sibling site')
  t.equal(
    (await app.inject({ url: step, headers: { cookie, 'sec-fetch-site': 'same-origin' } })).statusCode,
    404,
    'from this origin it runs (no such campaign)',
  )
  t.equal((await app.inject({ url: step, headers: { cookie, 'sec-fetch-site': 'none' } })).statusCode, 404, 'typed in the address bar, too')

  const out = await app.inject({ method: 'DELETE', url: '/api/v1/session/', headers: { cookie, origin: SAME_ORIGIN } })
  t.equal(out.statusCode, 204)
  t.match(String(out.headers['set-cookie']), /^rhizome_session=; Max-Age=0; Path=\//, 'the cookie is cleared')
  const after = await app.inject({ url: '/api/v1/campaign/', headers: { cookie } })
  t.equal(after.statusCode, 401, 'the cookie is refused after sign-out')
  t.equal(after.json().code, 'SESSION_ENDED')
})

t.test('a session ends with a new password, a deactivated user, idleness and its absolute end', async (t) => {
  const { app, db, aliceId } = await build(t, { SESSION_IDLE_MS: 60_000, SESSION_ABSOLUTE_MS: 3_600_000 })
  const api = client(app)
  await api.patch(`/user/${aliceId}/`, { password: PASSWORD })
  const read = (cookie: string) => app.inject({ url: '/api/v1/campaign/', headers: { cookie } }).then((r) => r.statusCode)

  let cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  t.equal(await read(cookie), 200)
  await api.patch(`/user/${aliceId}/`, { password: 'another long password' })
  t.equal(await read(cookie), 401, 'a new password ends every session of the user')

  cookie = cookieOf(await signIn(app, 'alice', 'another long password'))
  await sql`update auth_user set password_hash = null where id = ${aliceId}`.execute(db)
  t.equal(await read(cookie), 401, 'so does removing the password, even with SQL')

  // `set-password` as an operator runs it (the CLI reads the password from stdin or a prompt).
  const lines: string[] = []
  t.equal(await runCommand(db, 'set-password', 'alice', { password: PASSWORD }, (l) => lines.push(l)), 0)
  t.match(lines, [/password set for alice/])
  cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  t.equal((await api.patch(`/user/${aliceId}/`, { is_active: false })).status, 200)
  t.equal(await read(cookie), 401, 'a deactivated user')
  t.equal((await signIn(app, 'alice', PASSWORD)).statusCode, 401, 'cannot sign in')
  await api.patch(`/user/${aliceId}/`, { is_active: true })

  cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  await sql`update user_session set last_seen_at = now() - interval '61 seconds'`.execute(db)
  t.equal(await read(cookie), 401, 'idle longer than SESSION_IDLE_MS')
  cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  await sql`update user_session set expires_at = now() - interval '1 second'`.execute(db)
  t.equal(await read(cookie), 401, 'past its absolute end')
  cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  await sql`update user_session set last_seen_at = now() - interval '59 seconds'`.execute(db)
  t.equal(await read(cookie), 200, 'in use within the idle time')
})

t.test('wrong passwords lock out that address, whatever the user; behind TLS the cookie is __Host- and Secure', async (t) => {
  const { app, aliceId, adminId } = await build(t, { AUTH_FAILURE_MAX: 3, TRUST_PROXY: '127.0.0.1' })
  const api = client(app)
  await api.patch(`/user/${aliceId}/`, { password: PASSWORD })
  await api.patch(`/user/${adminId}/`, { password: PASSWORD })
  for (let i = 0; i < 3; i++) t.equal((await signIn(app, 'alice', `wrong ${i} password`)).statusCode, 401)
  const locked = await signIn(app, 'alice', PASSWORD)
  t.equal(locked.statusCode, 429, 'past the limit even the right password waits out the window')
  t.match(locked.headers['retry-after'], /^\d+$/)
  t.equal((await signIn(app, 'admin', PASSWORD)).statusCode, 429, 'and so does any other user from that address (spraying)')
  const elsewhere = { 'x-forwarded-for': '192.0.2.7' }
  t.equal((await signIn(app, 'alice', PASSWORD, elsewhere)).statusCode, 200, 'alice from another address signs in')

  const tls = await signIn(app, 'admin', PASSWORD, { 'x-forwarded-proto': 'https', ...elsewhere })
  t.equal(tls.statusCode, 200)
  t.match(String(tls.headers['set-cookie']), /^__Host-rhizome_session=[\w-]+; Max-Age=\d+; Path=\/; HttpOnly; Secure; SameSite=Lax$/)
  const cookie = cookieOf(tls)
  const who = await app.inject({ url: '/api/v1/session/', headers: { cookie, 'x-forwarded-proto': 'https' } })
  t.equal(who.json().username, 'admin')
  const write = await app.inject({
    method: 'POST',
    url: '/api/v1/campaign_type/',
    payload: { name: 'over TLS' },
    headers: { cookie, 'x-forwarded-proto': 'https', origin: 'https://localhost:80' },
  })
  t.equal(write.statusCode, 201, write.body)
  const signInFromElsewhere = await signIn(app, 'admin', PASSWORD, { origin: 'https://evil.example', ...elsewhere })
  t.equal(signInFromElsewhere.statusCode, 403, 'no sign-in posted from another site (login CSRF)')
})

t.test('deactivating a user ends their sessions for good: reactivated, the old cookie stays refused (API and SQL)', async (t) => {
  const { app, db, aliceId } = await build(t)
  const api = client(app)
  await api.patch(`/user/${aliceId}/`, { password: PASSWORD })
  const read = (cookie: string) => app.inject({ url: '/api/v1/campaign/', headers: { cookie } }).then((r) => r.statusCode)

  let cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  t.equal(await read(cookie), 200)
  await api.patch(`/user/${aliceId}/`, { is_active: false })
  await api.patch(`/user/${aliceId}/`, { is_active: true })
  t.equal(await read(cookie), 401, 'through the API')

  cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  await sql`update auth_user set is_active = false where id = ${aliceId}`.execute(db)
  await sql`update auth_user set is_active = true where id = ${aliceId}`.execute(db)
  t.equal(await read(cookie), 401, 'through SQL, as psql would')
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from user_session where user_id = ${aliceId}`.execute(db)
  t.equal(rows[0].n, 0, 'the sessions are deleted, not suspended')

  cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  await sql`update auth_user set first_name = 'Alice' where id = ${aliceId}`.execute(db)
  t.equal(await read(cookie), 200, 'another change to the user leaves the session alone')
})

t.test('behind TLS only the __Host- cookie is read, and sign-out clears both names', async (t) => {
  const { app, adminId } = await build(t, { TRUST_PROXY: '127.0.0.1' })
  await client(app).patch(`/user/${adminId}/`, { password: PASSWORD })
  const tls = { 'x-forwarded-proto': 'https' }
  const token = cookieOf(await signIn(app, 'admin', PASSWORD, tls)).split('=')[1]
  const who = (cookie: string, headers: Record<string, string> = tls) => app.inject({ url: '/api/v1/campaign/', headers: { cookie, ...headers } })
  t.equal((await who(`__Host-rhizome_session=${token}`)).statusCode, 200)
  t.equal((await who(`rhizome_session=${token}`)).statusCode, 401, 'the same token under the plain name is not read over TLS')
  t.equal((await who(`rhizome_session=${token}`, {})).statusCode, 200, 'over plain HTTP the plain name is the cookie')
  const out = await app.inject({
    method: 'DELETE',
    url: '/api/v1/session/',
    headers: { cookie: `__Host-rhizome_session=${token}; rhizome_session=planted`, origin: 'https://localhost:80', ...tls },
  })
  t.equal(out.statusCode, 204)
  const cleared = [out.headers['set-cookie']].flat().map(String)
  t.ok(
    cleared.some((c) => /^__Host-rhizome_session=; Max-Age=0/.test(c)),
    'the __Host- cookie is cleared',
  )
  t.ok(
    cleared.some((c) => /^rhizome_session=; Max-Age=0/.test(c)),
    'and the plain one',
  )
})

t.test('a short idle limit keeps a session in use alive: 5 s, used every 2 s, for 20 s', async (t) => {
  const { app, db, aliceId } = await build(t, { SESSION_IDLE_MS: 5_000 })
  await client(app).patch(`/user/${aliceId}/`, { password: PASSWORD })
  const cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  // Time passes in the database: each step moves the session's recorded use 2 s into the past.
  for (let second = 2; second <= 20; second += 2) {
    await sql`update user_session set last_seen_at = last_seen_at - interval '2 seconds', created_at = created_at - interval '2 seconds'`.execute(db)
    const res = await app.inject({ url: '/api/v1/campaign/', headers: { cookie } })
    t.equal(res.statusCode, 200, `used at ${second} s`)
  }
  await sql`update user_session set last_seen_at = last_seen_at - interval '5001 milliseconds'`.execute(db)
  t.equal((await app.inject({ url: '/api/v1/campaign/', headers: { cookie } })).statusCode, 401, 'unused for 5 s it ends')
})

t.test('ended sessions are purged at sign-in and by the schedule; "who is signed in" with an ended cookie is 204 and clears it', async (t) => {
  const { app, db, aliceId, adminId } = await build(t)
  const api = client(app)
  await api.patch(`/user/${aliceId}/`, { password: PASSWORD })
  await api.patch(`/user/${adminId}/`, { password: PASSWORD })
  const count = async () => (await sql<{ n: number }>`select count(*)::int as n from user_session`.execute(db)).rows[0].n
  const stale = cookieOf(await signIn(app, 'alice', PASSWORD))
  await signIn(app, 'alice', PASSWORD)
  await sql`update user_session set expires_at = now() - interval '1 second'`.execute(db)
  t.equal(await count(), 2)
  await signIn(app, 'admin', PASSWORD)
  t.equal(await count(), 1, 'a sign-in purges the ended ones')

  const who = await app.inject({ url: '/api/v1/session/', headers: { cookie: stale } })
  t.equal(who.statusCode, 204, 'an ended session: nobody is signed in')
  t.match(String(who.headers['set-cookie']), /^rhizome_session=; Max-Age=0/, 'and its cookie is cleared')

  await sql`update user_session set last_seen_at = now() - interval '2 hours'`.execute(db)
  const schedules = await app.jobs.boss.getSchedules()
  t.ok(
    schedules.some((s) => s.name === PURGE_SESSIONS),
    'the purge is on pg-boss cron',
  )
  // What the schedule fires, now instead of at the next tenth minute: a job on its queue.
  await app.jobs.boss.send(PURGE_SESSIONS, {})
  app.jobs.wake()
  t.equal(await eventually(count, (n) => n === 0, 15_000), 0, 'the scheduled job deleted the idle session')
})

t.test('cross-site signs: Origin null is refused without asking the Referer; Sec-Fetch-Site in any case, and as a list', async (t) => {
  const { app, adminId } = await build(t)
  await client(app).patch(`/user/${adminId}/`, { password: PASSWORD })
  const cookie = cookieOf(await signIn(app, 'admin', PASSWORD))
  const post = (headers: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/api/v1/campaign_type/', payload: { name: `NID ${Math.random()}` }, headers: { cookie, ...headers } })
  const opaque = await post({ origin: 'null', referer: `${SAME_ORIGIN}/app/` })
  t.equal(opaque.statusCode, 403, 'Origin: null with a same-origin Referer')
  t.equal(opaque.json().code, 'CROSS_SITE_REFUSED')
  t.equal((await signIn(app, 'admin', PASSWORD, { origin: 'null' })).statusCode, 403, 'a sign-in from an opaque origin')
  const step = '/api/v1/agg_refresh/?campaign_id=999'
  for (const site of ['Cross-Site', 'SAME-SITE', 'same-origin, cross-site', ' cross-site ']) {
    t.equal((await app.inject({ url: step, headers: { cookie, 'sec-fetch-site': site } })).statusCode, 403, `Sec-Fetch-Site: ${site}`)
  }
  t.equal((await app.inject({ url: step, headers: { cookie, 'sec-fetch-site': 'Same-Origin' } })).statusCode, 404, 'Same-Origin runs')
})

t.test('HEAD answers like GET without a body, on lists, details and the API index', async (t) => {
  const { app } = await build(t)
  for (const url of ['/api/v1/campaign_type/', '/api/v1/campaign_type/?format=csv', '/api/v1/user/1/', '/api/v1/', '/api/v1/indicator/schema/']) {
    const get = await app.inject({ url, headers: admin })
    const head = await app.inject({ method: 'HEAD', url, headers: admin })
    t.equal(head.statusCode, get.statusCode, `HEAD ${url}: ${get.statusCode}`)
    t.equal(head.body, '', 'no body')
    t.equal(head.headers['content-type'], get.headers['content-type'])
  }
  t.equal((await app.inject({ method: 'HEAD', url: '/api/v1/campaign_type/' })).statusCode, 401, 'and authenticates like GET')
  // A HEAD is asked as the GET it stands for: the same rights, the same refusals.
  for (const url of ['/api/v1/user/1/', '/api/v1/api_key/', '/api/v1/backup/', '/api/v1/agg_refresh/?campaign_id=1', '/api/v1/campaign_type/']) {
    const get = await app.inject({ url, headers: alice })
    const head = await app.inject({ method: 'HEAD', url, headers: alice })
    t.equal(head.statusCode, get.statusCode, `a plain user's HEAD ${url}: ${get.statusCode}, as GET`)
  }
})

t.test('a session says how long it lasts unused and gives its user a stable outbox key; a request for another user is refused', async (t) => {
  const { app, aliceId } = await build(t, { SESSION_IDLE_MS: 600_000 })
  const api = client(app)
  t.equal((await api.patch(`/user/${aliceId}/`, { password: PASSWORD })).status, 200)
  const first = (await signIn(app, 'alice', PASSWORD)).json()
  t.ok(first.session_expires_in_s > 590 && first.session_expires_in_s <= 600, `about SESSION_IDLE_MS from now (${first.session_expires_in_s} s)`)
  t.match(first.outbox_key, /^[0-9a-f]{64}$/, 'an outbox key')
  const second = await signIn(app, 'alice', PASSWORD)
  const cookie = cookieOf(second)
  t.equal(second.json().outbox_key, first.outbox_key, 'the same key in each of her sessions')
  t.equal((await app.inject({ url: '/api/v1/session/', headers: { cookie } })).json().outbox_key, first.outbox_key, 'and when asked who is signed in')
  t.notOk('outbox_key' in (await app.inject({ url: '/api/v1/session/', headers: admin })).json(), 'no key for a key-authenticated call')
  t.equal((await api.patch(`/user/${aliceId}/`, { password: `${PASSWORD} 2` })).status, 200)
  t.not((await signIn(app, 'alice', `${PASSWORD} 2`)).json().outbox_key, first.outbox_key, 'a new password, a new key')

  // A queued value names its author: sent under someone else's credentials, nothing is written.
  const before = (await api.get('/campaign_type/?limit=0')).body.meta.total_count
  const asAdmin = await app.inject({
    method: 'POST',
    url: '/api/v1/campaign_type/',
    headers: { ...admin, 'x-expected-user-id': String(aliceId) },
    payload: { name: 'Never made' },
  })
  t.equal(asAdmin.statusCode, 409)
  t.match(asAdmin.json(), { code: 'OTHER_USER', message: new RegExp(`user ${aliceId}'s`) })
  t.equal((await api.get('/campaign_type/?limit=0')).body.meta.total_count, before, 'nothing written')
  const bad = await app.inject({ url: '/api/v1/campaign/', headers: { ...admin, 'x-expected-user-id': 'x' } })
  t.match(bad.json(), { code: 'INVALID_HEADER' }, 'a header that is no id is a 400')
  const adminId = (await app.inject({ url: '/api/v1/session/', headers: admin })).json().id
  t.equal((await app.inject({ url: '/api/v1/campaign/', headers: { ...admin, 'x-expected-user-id': String(adminId) } })).statusCode, 200, 'her own: answered')
})
