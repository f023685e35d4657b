// Sign-in for people: `POST /api/v1/session/` ({username, password}, JSON or form) opens a session and
// sets its cookie, `GET` says who is signed in, `DELETE` signs out (lib/data/sessions.ts). Wrong
// passwords are budgeted per address and per account, and password checks pass a gate
// (lib/api/sign-in-guard.ts, SECURITY.md "Sign-in").
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError, badRequest } from '../lib/core/errors.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { endSession, findUserBySession, openSession, sessionFacts, sessionLimits, type SessionLimits } from '../lib/data/sessions.js'
import { findUserById } from '../lib/data/auth.js'
import { PASSWORD_MAX, verifyPassword } from '../lib/data/passwords.js'
import { HashGate, PASSWORD_BODY_LIMIT, SignInGuard } from '../lib/api/sign-in-guard.js'
import { assertSameOrigin, clearSessionCookie, sessionToken, setSessionCookie } from '../lib/api/session-cookie.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The budgets of wrong passwords (tests read how much they remember). */
    signInGuard: SignInGuard
    /** The gate every password hash passes (sign-in, a password change, a reset link). */
    passwordHashes: HashGate
    /**
     * The active user whose password this is, through the sign-in door's budgets and hash gate: 401
     * for a wrong pair, 429 once a budget is spent. Sign-in and DHIS2's HTTP Basic use it.
     */
    checkPassword(ip: string, username: string, password: string): Promise<number>
  }
}

/** Addresses and accounts the budgets remember at most (existing accounts within their window are always kept). */
const GUARD_CAPACITY = 10_000

const SignedIn = {
  type: 'object',
  required: ['id', 'username', 'is_superuser', 'metadata_editor', 'restricted', 'via'],
  properties: {
    id: { type: 'integer' },
    username: { type: 'string' },
    is_superuser: { type: 'boolean' },
    metadata_editor: {
      type: 'boolean',
      description: 'a member of the metadata editors group: changes the catalog, mappings and anyone’s charts and dashboards',
    },
    restricted: { type: 'boolean', description: 'reads and writes are limited to the subtree of top_lvl_location_id' },
    top_lvl_location_id: { type: 'integer', nullable: true },
    via: { type: 'string', enum: ['session', 'key'], description: 'how this request authenticated' },
    session_expires_in_s: {
      type: 'integer',
      description: 'a session: the seconds it lasts from now if unused (idle or absolute end, the sooner)',
    },
    outbox_key: {
      type: 'string',
      description:
        "a session: the user's key (hex) with which the web app seals the values it queues offline, so that none is sent under another person's session; the same in each of her sessions, new with a new password",
    },
  },
}

const USERNAME = /^[A-Za-z0-9_.@+-]{1,150}$/

/** Username and password, shaped before anything else runs (400 naming what is wrong). */
const credentialsOf = (request: FastifyRequest) => {
  const body = (request.body ?? {}) as Record<string, unknown>
  const { username, password } = body
  if (typeof username !== 'string' || typeof password !== 'string' || !username || !password) {
    throw badRequest('MISSING_CREDENTIALS', 'Give a username and a password (JSON or a form)')
  }
  if (!USERNAME.test(username)) {
    throw badRequest('INVALID_USERNAME', 'A username has 1 to 150 letters, digits and the characters _ . @ + -')
  }
  if (password.length > PASSWORD_MAX) {
    throw badRequest('PASSWORD_TOO_LONG', `A password has at most ${PASSWORD_MAX} characters`)
  }
  return { username, password }
}

/**
 * `POST /api/v1/session/`: the shaped body, the budgets (counted before the check), the hash gate, then
 * the session and its cookie.
 */
function signInRoute(app: FastifyInstance, limits: SessionLimits, tags: string[]) {
  const { config } = app
  const guard = new SignInGuard({
    windowMs: config.RATE_LIMIT_WINDOW_MS,
    perAddress: config.AUTH_FAILURE_MAX,
    perAccount: config.AUTH_ACCOUNT_FAILURE_MAX,
    capacity: GUARD_CAPACITY,
  })
  const hashes = new HashGate(config.AUTH_HASH_CONCURRENCY, config.AUTH_HASH_QUEUE)
  app.decorate('signInGuard', guard)
  app.decorate('passwordHashes', hashes)
  app.decorate('checkPassword', async (ip: string, username: string, password: string) => {
    // Counted before the check, so concurrent tries cannot overrun a budget (429 once spent).
    const attempt = guard.admit(ip, username)
    let verified: boolean
    let user: { id: number; password_hash: string | null; is_active: boolean } | undefined
    try {
      user = await app.db.db.selectFrom('auth_user').select(['id', 'password_hash', 'is_active']).where('username', '=', username).executeTakeFirst()
      if (user) attempt.accountExists()
      verified = await hashes.run(() => verifyPassword(password, user?.password_hash))
    } catch (error) {
      attempt.withdrawn()
      throw error
    }
    if (!user?.is_active || !verified) throw new ApiError(401, 'INVALID_CREDENTIALS', 'Wrong username or password')
    attempt.right()
    return user.id
  })
  app.post(
    '/api/v1/session/',
    {
      config: { credentials: 'none' },
      bodyLimit: PASSWORD_BODY_LIMIT,
      schema: {
        tags,
        operationId: 'signIn',
        summary: 'Sign in with a password: sets the session cookie',
        security: [],
        response: { 200: SignedIn, 400: errorSchema, 401: errorSchema, 403: errorSchema, 413: errorSchema, 429: errorSchema },
      },
    },
    async (request, reply) => {
      // Login CSRF: a sign-in is only taken from this origin's pages (or from a client that sends no Origin).
      if (request.headers.origin !== undefined) assertSameOrigin(request)
      const { username, password } = credentialsOf(request)
      const userId = await app.checkPassword(request.ip, username, password)
      const token = await openSession(app.db.db, userId, limits)
      setSessionCookie(request, reply, token, limits.absoluteMs)
      const signedIn = (await findUserById(app.db.db, userId))!
      const sessionId = (await findUserBySession(app.db.db, token, limits))?.session_id
      return { ...signedIn, via: 'session', ...(sessionId ? await sessionFacts(app.db.db, sessionId, limits) : {}) }
    },
  )
}

export default fp(
  async function session(app: FastifyInstance) {
    const limits = sessionLimits(app.config)
    const tags = ['session']
    signInRoute(app, limits, tags)

    app.get(
      '/api/v1/session/',
      {
        config: { credentials: 'optional' },
        schema: {
          tags,
          operationId: 'getSession',
          summary: 'Who is signed in: 204 when nobody is (no credentials, or a session that has ended)',
          security: [],
          response: { 200: SignedIn, 204: { type: 'null' }, 401: errorSchema },
        },
      },
      // A page asks this before anyone has signed in: "nobody" is an answer, not an error (a 401 here
      // was logged in every browser's console). A wrong key is still 401 (plugins/auth.ts).
      async (request, reply) => {
        const sessionId = request.user?.session_id
        if (request.user) return { ...request.user, via: sessionId ? 'session' : 'key', ...(sessionId ? await sessionFacts(app.db.db, sessionId, limits) : {}) }
        if (sessionToken(request)) clearSessionCookie(request, reply)
        return reply.code(204).send()
      },
    )

    app.delete(
      '/api/v1/session/',
      {
        schema: {
          tags,
          operationId: 'signOut',
          summary: 'Sign out: the session ends in every process',
          security: API_SECURITY,
          response: { 204: { type: 'null' }, 401: errorSchema, 403: errorSchema },
        },
      },
      async (request, reply) => {
        const token = sessionToken(request)
        if (token && request.user?.session_id) {
          await endSession(app.db.db, token)
          app.dropAuthCache()
        }
        clearSessionCookie(request, reply)
        return reply.code(204).send()
      },
    )
  },
  { name: 'session', dependencies: ['db', 'auth', 'protection'] },
)
