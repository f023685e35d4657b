// Sign-in for people (plugins/session.ts, lib/data/sessions.ts): passwords, the session cookie, the
// CSRF rule of cookie-authenticated changes, sign-out and the ways a session ends, on both engines.
import t from 'tap'
import { sql } from 'kysely'
import { admin, build } from './helper.js'
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
  t.equal((await app.inject({ url: '/api/v1/session/' })).statusCode, 401)
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

t.test('wrong passwords lock out that client for that user, as wrong keys do; behind TLS the cookie is __Host- and Secure', async (t) => {
  const { app, aliceId, adminId } = await build(t, { AUTH_FAILURE_MAX: 3, TRUST_PROXY: '127.0.0.1' })
  const api = client(app)
  await api.patch(`/user/${aliceId}/`, { password: PASSWORD })
  await api.patch(`/user/${adminId}/`, { password: PASSWORD })
  for (let i = 0; i < 3; i++) t.equal((await signIn(app, 'alice', `wrong ${i} password`)).statusCode, 401)
  const locked = await signIn(app, 'alice', PASSWORD)
  t.equal(locked.statusCode, 429, 'past the limit even the right password waits out the window')
  t.match(locked.headers['retry-after'], /^\d+$/)
  t.equal((await signIn(app, 'admin', PASSWORD)).statusCode, 200, 'another user from the same address is not locked out')

  const tls = await signIn(app, 'admin', PASSWORD, { 'x-forwarded-proto': 'https' })
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
  const signInFromElsewhere = await signIn(app, 'admin', PASSWORD, { origin: 'https://evil.example' })
  t.equal(signInFromElsewhere.statusCode, 403, 'no sign-in posted from another site (login CSRF)')
})
