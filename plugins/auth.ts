// Authentication of every /api/v1 request (resource-api §5): `ApiKey user:key` or `Bearer key`, or a
// person's session cookie (plugins/session.ts), which changes nothing unless it comes from this origin.
// DHIS2's paths also take DHIS2's clients' ways: `ApiToken key`, and HTTP Basic with a password.
// Successful authentications are cached for a few seconds; the database notifies every change to keys,
// users, permissions or roots (sql/002), and the cache is dropped at once, so a revoked key is refused
// on the next request whoever revoked it.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { createHash } from 'node:crypto'
import { AUTH_CHANNEL, findUserById, findUserByKey, parseAuthorization, parseBasic, touchKey, type AuthUser } from '../lib/data/auth.js'
import { findUserBySession, sessionLimits } from '../lib/data/sessions.js'
import { assertNotCrossSite, assertSameOrigin, sessionToken } from '../lib/api/session-cookie.js'
import { ApiError } from '../lib/core/errors.js'
import { isApiPath, isDhis2Path } from '../lib/api/request.js'
import { NotifiedCache } from '../lib/data/notified-cache.js'
import { readThroughFailover } from '../lib/data/database.js'
import { meansPrimaryLost } from '../lib/data/writable-host.js'

declare module 'fastify' {
  interface FastifyRequest {
    user?: AuthUser
  }
  interface FastifyInstance {
    /** Forget cached authentications (after this process wrote; other writers are heard through NOTIFY). */
    dropAuthCache(): void
  }
  interface FastifyContextConfig {
    /**
     * What a route asks of the caller: `none` for the calls made without credentials (signing in,
     * using a reset link), `optional` for "who is signed in", which answers "nobody" instead of 401.
     * Every other /api/v1 route requires them.
     */
    credentials?: 'none' | 'optional'
  }
}

const CACHE_TTL_MS = 10_000

/** What the matched route asks of the caller (its `config.credentials`); unknown routes require credentials. */
const credentialsAskedBy = (request: FastifyRequest) => request.routeOptions.config?.credentials

const tooManyFailures = (seconds: number) =>
  new ApiError(429, 'TOO_MANY_AUTH_FAILURES', `Too many failed authentications from this client for this user; retry in ${seconds} s`, undefined, {
    'retry-after': String(seconds),
  })

/**
 * A request made for one user (`X-Expected-User-Id`: the web app's queued values, typed by her) is
 * refused when its credentials are another's, before anything is written: on a shared browser the
 * session cookie may have changed hands since the value was typed.
 */
function assertExpectedUser(request: FastifyRequest, user: AuthUser) {
  const expected = request.headers['x-expected-user-id']
  if (expected === undefined) return
  if (typeof expected !== 'string' || !/^[1-9][0-9]{0,9}$/.test(expected)) {
    throw new ApiError(400, 'INVALID_HEADER', 'X-Expected-User-Id must be one user id')
  }
  if (Number(expected) !== user.id) {
    throw new ApiError(409, 'OTHER_USER', `This request is user ${expected}'s, and the credentials are another user's: sign in as that user to send it`)
  }
}

export default fp(
  async function auth(app: FastifyInstance) {
    const cache = new NotifiedCache<AuthUser>({ name: 'auth', maxEntries: 10_000, ttlMs: CACHE_TTL_MS })
    const unlisten = await cache.listen(app.db, AUTH_CHANNEL)
    app.addHook('onClose', () => unlisten())
    app.decorate('dropAuthCache', () => cache.drop())

    // Keyed by the key as presented, not by its SHA-256: hashing it was the largest single step of an
    // authenticated request in CPU profiles (17–33 µs; bench/README.md, "Datapoint reads"). The lookup
    // hashes it on a miss.
    async function authenticate(credentials: { username?: string; key: string }): Promise<AuthUser | undefined> {
      const user = await cache.remember(credentials.key, () => readThroughFailover(app.db, (db) => findUserByKey(db, credentials)))
      return user && (credentials.username === undefined || credentials.username === user.username) ? user : undefined
    }

    /**
     * DHIS2's clients' HTTP Basic, on DHIS2's paths only: a password is checked through the sign-in
     * door's budgets (app.checkPassword); a right pair is remembered as a key is, by its digest. A
     * browser sends Basic by itself once it has it, so another site's page may not use it (as a cookie).
     */
    async function byPassword(request: FastifyRequest, basic: { username: string; password: string }): Promise<AuthUser> {
      if (!isDhis2Path(request.url)) {
        throw new ApiError(401, 'BASIC_NOT_TAKEN', "HTTP Basic is taken on DHIS2's paths only (/api/dataValueSets, /api/metadata): send an API key")
      }
      assertNotCrossSite(request, 'HTTP Basic')
      const digest = createHash('sha256').update(`${basic.username}\0${basic.password}`).digest('hex')
      const user = await cache.remember(`basic ${digest}`, async () =>
        findUserById(app.db.db, await app.checkPassword(request.ip, basic.username, basic.password)),
      )
      if (!user) throw new ApiError(401, 'INVALID_CREDENTIALS', 'Wrong username or password')
      assertExpectedUser(request, user)
      return user
    }

    // The person of a session cookie (lib/data/sessions.ts), read at every request: unlike a key, a
    // session ends by itself (idle, absolute), which a cached answer would outlive.
    const limits = sessionLimits(app.config)
    const bySession = (token: string) => findUserBySession(app.db.db, token, limits)

    app.decorateRequest('user', undefined)
    app.addHook('onRequest', async (request: FastifyRequest) => {
      const asked = credentialsAskedBy(request)
      if (request.method === 'OPTIONS' || !isApiPath(request.url)) return
      if (asked === 'none') return
      const credentials = parseAuthorization(request.headers.authorization)
      const token = credentials ? undefined : sessionToken(request)
      if (token) {
        const user = await bySession(token)
        if (!user && asked === 'optional') return
        if (!user) throw new ApiError(401, 'SESSION_ENDED', 'Your session has ended: sign in again')
        assertNotCrossSite(request)
        assertSameOrigin(request)
        assertExpectedUser(request, user)
        request.user = user
        return
      }
      if (!request.headers.authorization && asked === 'optional') return
      const basic = credentials ? undefined : parseBasic(request.headers.authorization)
      if (basic) {
        request.user = await byPassword(request, basic)
        return
      }
      if (!credentials) throw new ApiError(401, 'UNAUTHENTICATED', 'Authentication required')
      const user = await authenticate(credentials)
      if (!user) {
        // Key guessing: after AUTH_FAILURE_MAX wrong keys in the window, wrong keys from this client for
        // this username get 429. A right key is always let in: a key is 160 random bits, so the limit
        // only slows noise, and wrong tries in someone's name must never lock that someone out.
        const failures = await app.authFailures.peek(request)
        if (failures && !failures.isAllowed && failures.remaining === 0) throw tooManyFailures(failures.ttlInSeconds)
        await app.authFailures.record(request)
        throw new ApiError(401, 'UNAUTHENTICATED', 'Invalid API key')
      }
      assertExpectedUser(request, user)
      request.user = user
      // Bookkeeping: while no host takes writes (a failover), a read goes on without it.
      await touchKey(app.db.db, user).catch((error) => {
        if (!app.db.standby || !meansPrimaryLost(error)) throw error
      })
    })
  },
  { name: 'auth', dependencies: ['db', 'protection'] },
)
