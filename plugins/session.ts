// Sign-in for people: `POST /api/v1/session/` ({username, password}, JSON or form) opens a session and
// sets its cookie, `GET` says who is signed in, `DELETE` signs out (lib/data/sessions.ts). Wrong
// passwords are counted per client address and username, as wrong keys are (SECURITY.md).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError, badRequest } from '../lib/core/errors.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { endSession, openSession } from '../lib/data/sessions.js'
import { findUserById } from '../lib/data/auth.js'
import { verifyPassword } from '../lib/data/passwords.js'
import { assertSameOrigin, clearSessionCookie, sessionToken, setSessionCookie } from '../lib/api/session-cookie.js'

const SignedIn = {
  type: 'object',
  required: ['id', 'username', 'is_superuser', 'restricted', 'via'],
  properties: {
    id: { type: 'integer' },
    username: { type: 'string' },
    is_superuser: { type: 'boolean' },
    restricted: { type: 'boolean', description: 'reads and writes are limited to the subtree of top_lvl_location_id' },
    top_lvl_location_id: { type: 'integer', nullable: true },
    via: { type: 'string', enum: ['session', 'key'], description: 'how this request authenticated' },
  },
}

const credentialsOf = (request: FastifyRequest) => {
  const body = (request.body ?? {}) as Record<string, unknown>
  const { username, password } = body
  if (typeof username !== 'string' || typeof password !== 'string' || !username || !password) {
    throw badRequest('MISSING_CREDENTIALS', 'Give a username and a password (JSON or a form)')
  }
  return { username, password }
}

export default fp(
  async function session(app: FastifyInstance) {
    const limits = { idleMs: app.config.SESSION_IDLE_MS, absoluteMs: app.config.SESSION_ABSOLUTE_MS }
    const failures = app.createRateLimit({
      max: app.config.AUTH_FAILURE_MAX,
      timeWindow: app.config.RATE_LIMIT_WINDOW_MS,
      allowList: [],
      keyGenerator: (request) => `password ${request.ip} ${((request.body ?? {}) as { username?: unknown }).username}`,
    })
    const tags = ['session']

    app.post(
      '/api/v1/session/',
      {
        schema: {
          tags,
          operationId: 'signIn',
          summary: 'Sign in with a password: sets the session cookie',
          security: [],
          response: { 200: SignedIn, 400: errorSchema, 401: errorSchema, 403: errorSchema, 429: errorSchema },
        },
      },
      async (request, reply) => {
        // Login CSRF: a sign-in is only taken from this origin's pages (or from a client that sends no Origin).
        if (request.headers.origin) assertSameOrigin(request)
        const { username, password } = credentialsOf(request)
        // Past AUTH_FAILURE_MAX wrong passwords from this address for this user, every try waits out the window.
        const counted = await failures(request, { increment: false })
        if (!counted.isAllowed && counted.remaining === 0) {
          throw new ApiError(
            429,
            'TOO_MANY_AUTH_FAILURES',
            `Too many wrong passwords from this client for this user; retry in ${counted.ttlInSeconds} s`,
            undefined,
            {
              'retry-after': String(counted.ttlInSeconds),
            },
          )
        }
        const user = await app.db.db.selectFrom('auth_user').select(['id', 'password_hash', 'is_active']).where('username', '=', username).executeTakeFirst()
        const verified = await verifyPassword(password, user?.password_hash)
        if (!user?.is_active || !verified) {
          await failures(request)
          throw new ApiError(401, 'INVALID_CREDENTIALS', 'Wrong username or password')
        }
        const token = await openSession(app.db.db, user.id, limits)
        setSessionCookie(request, reply, token, limits.absoluteMs)
        const signedIn = (await findUserById(app.db.db, user.id))!
        return { ...signedIn, via: 'session' }
      },
    )

    app.get(
      '/api/v1/session/',
      { schema: { tags, operationId: 'getSession', summary: 'Who is signed in', security: API_SECURITY, response: { 200: SignedIn, 401: errorSchema } } },
      async (request) => ({ ...request.user!, via: request.user!.session_id ? 'session' : 'key' }),
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
