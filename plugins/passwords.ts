// Passwords without email: a signed-in person changes their own password (the current one required),
// and an administrator issues a one-time reset link (lib/data/password-resets.ts) that its holder uses
// without signing in. No password is ever shown to anyone; a new password ends the user's sessions
// everywhere (sql/013), and the person who changed it is signed in again on this browser.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError, badRequest, forbidden, notFound } from '../lib/core/errors.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { findUserById } from '../lib/data/auth.js'
import { hashPassword, PASSWORD_MAX, PasswordRefused, verifyPassword } from '../lib/data/passwords.js'
import { issueReset, redeemReset, resetHolder } from '../lib/data/password-resets.js'
import { openSession, sessionLimits } from '../lib/data/sessions.js'
import { assertSameOrigin, setSessionCookie } from '../lib/api/session-cookie.js'
import { bodyValidation, partsValidation, rowIdOf } from '../lib/api/route-validation.js'
import { PASSWORD_BODY_LIMIT } from '../lib/api/sign-in-guard.js'

/** A string field of the body, present and not too long for a hash (400 naming it otherwise). */
function field(body: unknown, name: string): string {
  const value = ((body ?? {}) as Record<string, unknown>)[name]
  if (typeof value !== 'string' || !value) throw badRequest('MISSING_FIELD', `Give ${name} (a string)`)
  if (value.length > PASSWORD_MAX) throw badRequest('PASSWORD_TOO_LONG', `${name}: at most ${PASSWORD_MAX} characters`)
  return value
}

/** A password route's body: string fields, documented, and read before the handler (typed `Body<N>`). */
function passwordBody<N extends string>(names: N[]) {
  const read = (body: unknown) => Object.fromEntries(names.map((name) => [name, field(body, name)])) as Body<N>
  const schema = { type: 'object', required: names, properties: Object.fromEntries(names.map((name) => [name, { type: 'string' }])) }
  return { schema, read }
}
type Body<N extends string> = Record<N, string>
const OWN_CHANGE = passwordBody(['current_password', 'new_password'])
const RESET = passwordBody(['token', 'new_password'])

/** The hash of a new password, through the gate every password hash passes (400 when it is refused). */
async function newPasswordHash(app: FastifyInstance, password: string) {
  try {
    return await app.passwordHashes.run(() => hashPassword(password))
  } catch (error) {
    if (error instanceof PasswordRefused) throw badRequest('VALIDATION_ERROR', `new_password: ${error.message}`)
    throw error
  }
}

/** `POST /api/v1/session/password/`: the current password (counted as a sign-in try), then the new one. */
async function changeOwnPassword(app: FastifyInstance, request: FastifyRequest<{ Body: Body<'current_password' | 'new_password'> }>, reply: FastifyReply) {
  const user = request.user!
  const { current_password: current, new_password: next } = request.body
  const attempt = app.signInGuard.admit(request.ip, user.username)
  const row = await app.db.db.selectFrom('auth_user').select('password_hash').where('id', '=', user.id).executeTakeFirst()
  if (!(await app.passwordHashes.run(() => verifyPassword(current, row?.password_hash)))) {
    throw forbidden('The current password is wrong', 'WRONG_PASSWORD')
  }
  attempt.right()
  await app.db.db
    .updateTable('auth_user')
    .set({ password_hash: await newPasswordHash(app, next) })
    .where('id', '=', user.id)
    .execute()
  app.dropAuthCache()
  // Every session of theirs ended with the old password; this browser gets a new one.
  if (user.session_id) {
    const limits = sessionLimits(app.config)
    setSessionCookie(request, reply, await openSession(app.db.db, user.id, limits), limits.absoluteMs)
  }
  return reply.code(204).send()
}

const linkInvalid = () => new ApiError(404, 'RESET_LINK_INVALID', 'This reset link does not work: it was used, it expired, or it never existed')

/** `POST /api/v1/session/reset/`: a link that works, then the new password; without credentials. */
async function useResetLink(app: FastifyInstance, request: FastifyRequest<{ Body: Body<'token' | 'new_password'> }>, reply: FastifyReply) {
  const { token, new_password: password } = request.body
  // A wrong token counts as a wrong password of this address: guessing links is budgeted like guessing passwords.
  const attempt = app.signInGuard.admit(request.ip, 'password reset link')
  const holder = token.length <= 64 ? await resetHolder(app.db.db, token) : undefined
  if (!holder) throw linkInvalid()
  attempt.right()
  if (!(await redeemReset(app.db.db, token, await newPasswordHash(app, password)))) {
    throw linkInvalid()
  }
  app.dropAuthCache()
  return reply.code(204).send()
}

/** `POST /api/v1/user/:id/password_reset/` (superusers): a link for that user, its token shown once. */
async function issueResetLink(app: FastifyInstance, request: FastifyRequest<{ Params: { id: number } }>, reply: FastifyReply) {
  const { id } = request.params
  const user = await findUserById(app.db.db, id)
  if (!user) throw notFound('user', String(id))
  const link = await issueReset(app.db.db, user.id, request.user!.id)
  return reply.code(201).send({ ...link, username: user.username, url: `/app/#/reset/${link.token}` })
}

const ResetLink = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    user_id: { type: 'integer' },
    username: { type: 'string' },
    token: { type: 'string', description: 'shown once: only its hash is kept' },
    url: { type: 'string', description: 'the page of the web app that uses it' },
    expires_at: { type: 'string', description: '24 hours after it was issued' },
  },
  required: ['id', 'user_id', 'username', 'token', 'url', 'expires_at'],
}
const answers = { 204: { type: 'null' }, 400: errorSchema, 401: errorSchema, 403: errorSchema, 404: errorSchema, 413: errorSchema, 429: errorSchema }

export default fp(
  async function passwords(app: FastifyInstance) {
    const tags = ['session']
    // The body is read before the handler, a bad one named in the API's own 400; a link's use from
    // another site is refused (403) before its body is looked at.
    const documented = (operationId: string, summary: string, body: ReturnType<typeof passwordBody>, { anonymous = false } = {}) => ({
      config: { credentials: anonymous ? ('none' as const) : undefined },
      bodyLimit: PASSWORD_BODY_LIMIT,
      schema: { tags, operationId, summary, security: anonymous ? [] : API_SECURITY, body: body.schema, response: answers },
      ...bodyValidation(body.read, anonymous ? (request) => request.headers.origin !== undefined && assertSameOrigin(request) : undefined),
    })
    app.post<{ Body: Body<'current_password' | 'new_password'> }>(
      '/api/v1/session/password/',
      documented('changePassword', 'Change your own password: the current one, then the new one (your other sessions end)', OWN_CHANGE),
      (request, reply) => changeOwnPassword(app, request, reply),
    )
    app.post<{ Body: Body<'token' | 'new_password'> }>(
      '/api/v1/session/reset/',
      documented('useResetLink', 'Set a password with a one-time reset link (no credentials; the user’s sessions end)', RESET, { anonymous: true }),
      (request, reply) => useResetLink(app, request, reply),
    )
    app.post<{ Params: { id: number } }>(
      '/api/v1/user/:id/password_reset/',
      {
        schema: {
          tags,
          operationId: 'issuePasswordReset',
          summary: 'Issue a one-time password reset link for a user (superusers; valid 24 h)',
          security: API_SECURITY,
          params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
          response: { 201: ResetLink, 401: errorSchema, 403: errorSchema, 404: errorSchema },
        },
        // A superuser's route: the 403 comes before the id is read.
        ...partsValidation({ params: rowIdOf('user') }, (request) => {
          if (!request.user!.is_superuser) throw forbidden('Only a superuser issues password reset links')
        }),
      },
      (request, reply) => issueResetLink(app, request, reply),
    )
  },
  { name: 'passwords', dependencies: ['db', 'auth', 'session'] },
)
