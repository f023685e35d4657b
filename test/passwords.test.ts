// Passwords without email (plugins/passwords.ts, lib/data/password-resets.ts), on both engines: a
// person changes their own password with the current one, and an administrator's one-time reset link
// sets a password once, before it expires, ending the user's sessions; nobody ever sees a password.
import t from 'tap'
import { sql } from 'kysely'
import { admin, alice, build } from './helper.js'
import { erin, moreUsers } from './world.js'

const PASSWORD = 'correct horse battery'
const NEW_PASSWORD = 'a new and longer phrase'
const SAME_ORIGIN = 'http://localhost:80'

type App = Awaited<ReturnType<typeof build>>['app']

const signIn = (app: App, username: string, password: string) => app.inject({ method: 'POST', url: '/api/v1/session/', payload: { username, password } })
const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie']).split(';')[0]
const whoIs = async (app: App, cookie: string) => (await app.inject({ url: '/api/v1/session/', headers: { cookie } })).statusCode
const post = (app: App, url: string, payload: object, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url, payload, headers })

t.test('a signed-in person changes their own password: the current one first, every other session ends, this one goes on', async (t) => {
  const { app, aliceId } = await build(t)
  await app.inject({ method: 'PATCH', url: `/api/v1/user/${aliceId}/`, payload: { password: PASSWORD }, headers: admin })
  const here = cookieOf(await signIn(app, 'alice', PASSWORD))
  const elsewhere = cookieOf(await signIn(app, 'alice', PASSWORD))
  const change = (payload: object, cookie = here) => post(app, '/api/v1/session/password/', payload, { cookie, origin: SAME_ORIGIN })

  t.match((await change({ current_password: 'not her password', new_password: NEW_PASSWORD })).json(), {
    statusCode: 403,
    code: 'WRONG_PASSWORD',
    message: 'The current password is wrong',
  })
  t.match((await change({ current_password: PASSWORD })).json(), { statusCode: 400, code: 'MISSING_FIELD', message: 'Give new_password (a string)' })
  t.match((await change({ current_password: PASSWORD, new_password: 'short' })).json(), {
    statusCode: 400,
    code: 'VALIDATION_ERROR',
    message: /^new_password: a password has at least 10 characters/,
  })
  t.equal((await post(app, '/api/v1/session/password/', { current_password: PASSWORD, new_password: NEW_PASSWORD })).statusCode, 401, 'nobody signed in: 401')
  const changed = await change({ current_password: PASSWORD, new_password: NEW_PASSWORD }, elsewhere)
  t.equal(changed.statusCode, 204, 'changed from the other browser')
  t.equal(await whoIs(app, cookieOf(changed)), 200, 'which stays signed in, on a new cookie')
  t.equal(await whoIs(app, here), 204, 'every other session ended')
  t.equal((await signIn(app, 'alice', PASSWORD)).statusCode, 401, 'the old password no longer signs in')
  t.equal((await signIn(app, 'alice', NEW_PASSWORD)).statusCode, 200, 'the new one does')
})

t.test('the changed password’s session: the answer carries a new cookie that works', async (t) => {
  const { app, aliceId } = await build(t)
  await app.inject({ method: 'PATCH', url: `/api/v1/user/${aliceId}/`, payload: { password: PASSWORD }, headers: admin })
  const cookie = cookieOf(await signIn(app, 'alice', PASSWORD))
  const changed = await post(app, '/api/v1/session/password/', { current_password: PASSWORD, new_password: NEW_PASSWORD }, { cookie, origin: SAME_ORIGIN })
  t.equal(changed.statusCode, 204)
  const renewed = cookieOf(changed)
  t.not(renewed, cookie, 'a new session')
  t.equal(await whoIs(app, renewed), 200, 'signed in with it')
  t.equal(await whoIs(app, cookie), 204, 'the old one ended')
  t.equal(
    (
      await post(
        app,
        '/api/v1/session/password/',
        { current_password: NEW_PASSWORD, new_password: PASSWORD },
        { cookie: renewed, origin: 'https://elsewhere.example' },
      )
    ).statusCode,
    403,
    'a cross-site change refused',
  )
})

t.test('a reset link: issued by a superuser, shown once, works once, ends the user’s sessions', async (t) => {
  const { app, aliceId, db } = await build(t)
  await app.inject({ method: 'PATCH', url: `/api/v1/user/${aliceId}/`, payload: { password: PASSWORD }, headers: admin })
  const session = cookieOf(await signIn(app, 'alice', PASSWORD))
  t.equal((await post(app, `/api/v1/user/${aliceId}/password_reset/`, {}, alice)).statusCode, 403, 'not by a user who is not a superuser')
  t.equal((await post(app, '/api/v1/user/99999/password_reset/', {}, admin)).statusCode, 404, 'an unknown user: 404')
  const issued = await post(app, `/api/v1/user/${aliceId}/password_reset/`, {}, admin)
  t.equal(issued.statusCode, 201, issued.body)
  const link = issued.json()
  t.match(link, { user_id: aliceId, username: 'alice', token: /^[\w-]{43}$/, url: `/app/#/reset/${link.token}` })
  const hoursLeft = (Date.parse(`${link.expires_at}Z`) - Date.now()) / 3_600_000
  t.ok(hoursLeft > 23.9 && hoursLeft <= 24, `valid 24 h (${hoursLeft.toFixed(2)} h left)`)
  const stored = await sql<{ token_hash: string }>`select token_hash from password_reset`.execute(db)
  t.notOk(
    stored.rows.some((r) => r.token_hash.includes(link.token)),
    'only the token’s hash is kept',
  )

  const use = (token: string, new_password = NEW_PASSWORD) => post(app, '/api/v1/session/reset/', { token, new_password })
  t.match((await use(link.token, 'short')).json(), { statusCode: 400, code: 'VALIDATION_ERROR' }, 'a refused password leaves the link working')
  t.equal((await use(link.token)).statusCode, 204, 'used without signing in')
  t.equal(await whoIs(app, session), 204, 'her sessions ended')
  t.equal((await signIn(app, 'alice', NEW_PASSWORD)).statusCode, 200, 'the new password signs in')
  t.match((await use(link.token, 'yet another passphrase')).json(), { statusCode: 404, code: 'RESET_LINK_INVALID' }, 'a second use: 404')
  t.equal((await signIn(app, 'alice', NEW_PASSWORD)).statusCode, 200, 'the password stays as set')

  const expired = (await post(app, `/api/v1/user/${aliceId}/password_reset/`, {}, admin)).json()
  await sql`update password_reset set expires_at = now() - interval '1 second'`.execute(db)
  t.equal((await use(expired.token)).statusCode, 404, 'an expired link: 404')
  const forDisabled = (await post(app, `/api/v1/user/${aliceId}/password_reset/`, {}, admin)).json()
  await app.inject({ method: 'PATCH', url: `/api/v1/user/${aliceId}/`, payload: { is_active: false }, headers: admin })
  t.equal((await use(forDisabled.token)).statusCode, 404, 'a disabled user’s link: 404')
  await app.inject({ method: 'PATCH', url: `/api/v1/user/${aliceId}/`, payload: { is_active: true }, headers: admin })
  t.equal((await use(forDisabled.token)).statusCode, 404, 'and still 404 once she is reactivated: deactivation ended it')
  const superseded = (await post(app, `/api/v1/user/${aliceId}/password_reset/`, {}, admin)).json()
  await app.inject({ method: 'PATCH', url: `/api/v1/user/${aliceId}/`, payload: { password: PASSWORD }, headers: admin })
  t.equal((await use(superseded.token)).statusCode, 404, 'a password set otherwise ends her open links')
  t.match((await post(app, '/api/v1/session/reset/', { new_password: NEW_PASSWORD })).json(), { statusCode: 400, code: 'MISSING_FIELD' })
})

t.test('guessing reset links is budgeted like guessing passwords', async (t) => {
  const { app } = await build(t, { AUTH_FAILURE_MAX: 3, TRUST_PROXY: '127.0.0.1' })
  const guess = () => post(app, '/api/v1/session/reset/', { token: 'x'.repeat(43), new_password: NEW_PASSWORD }, { 'x-forwarded-for': '203.0.113.9' })
  for (let i = 0; i < 3; i++) t.equal((await guess()).statusCode, 404)
  const refused = await guess()
  t.equal(refused.statusCode, 429, 'the fourth wrong link from the address: 429')
  t.match(refused.json(), { code: 'TOO_MANY_AUTH_FAILURES' })
})

t.test('who may use each door: only a superuser issues links; a link is no credential; a key user changes only their own password', async (t) => {
  const { app, aliceId, db, adminId } = await build(t)
  const { erinId } = await moreUsers(db)
  await app.inject({ method: 'PATCH', url: `/api/v1/user/${aliceId}/`, payload: { password: PASSWORD }, headers: admin })
  const issue = (target: number, headers: Record<string, string>) => post(app, `/api/v1/user/${target}/password_reset/`, {}, headers)
  t.match((await issue(adminId, erin)).json(), { statusCode: 403 }, 'a metadata editor may not issue one (not even for a superuser’s account)')
  t.match((await issue(erinId, alice)).json(), { statusCode: 403 }, 'a plain user may not either')
  t.equal((await issue(aliceId, {})).statusCode, 401, 'nor anyone without credentials')
  t.equal((await sql<{ n: number }>`select count(*)::int as n from password_reset`.execute(db)).rows[0].n, 0, 'no link was made')

  const link = (await issue(aliceId, admin)).json()
  t.equal((await app.inject({ url: '/api/v1/campaign/', headers: { authorization: `ApiKey alice:${link.token}` } })).statusCode, 401, 'the token is not a key')
  t.equal((await app.inject({ url: '/api/v1/campaign/', headers: { cookie: `rhizome_session=${link.token}` } })).statusCode, 401, 'nor a session')

  // With her key (no session), alice changes her own password, the current one given; nobody else's.
  const byKey = await post(app, '/api/v1/session/password/', { current_password: PASSWORD, new_password: NEW_PASSWORD }, alice)
  t.equal(byKey.statusCode, 204)
  t.notOk(byKey.headers['set-cookie'], 'no cookie for a key')
  t.equal((await signIn(app, 'alice', NEW_PASSWORD)).statusCode, 200, 'her password changed')
  t.equal((await app.inject({ method: 'HEAD', url: '/api/v1/session/' })).statusCode, 204, 'who is signed in: still "nobody" without credentials')
})
