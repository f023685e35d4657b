// The session cookie and the CSRF rule of cookie-authenticated requests (SECURITY.md, "Sessions").
import type { FastifyReply, FastifyRequest } from 'fastify'
import type {} from '@fastify/cookie'
import { forbidden } from '../core/errors.js'

const PLAIN = 'rhizome_session'
const HOST_ONLY = '__Host-rhizome_session'

/** Behind TLS the cookie is `__Host-` prefixed (Secure, Path=/, no Domain: only this origin may set it). */
const cookieName = (request: FastifyRequest) => (request.protocol === 'https' ? HOST_ONLY : PLAIN)

/**
 * The session token the request carries, if any. Behind TLS only the `__Host-` cookie is read: a plain
 * `rhizome_session` there could have been planted by a sibling subdomain or a plain-HTTP page.
 */
export function sessionToken(request: FastifyRequest): string | undefined {
  return request.cookies?.[cookieName(request)]
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeMs: number): void {
  reply.setCookie(cookieName(request), token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
    maxAge: Math.floor(maxAgeMs / 1000),
  })
}

/** Clears both names: a plain cookie left from before TLS (or planted) goes too. */
export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  const secure = request.protocol === 'https'
  reply.clearCookie(cookieName(request), { path: '/', httpOnly: true, sameSite: 'lax', secure })
  if (secure) reply.clearCookie(PLAIN, { path: '/', httpOnly: true, sameSite: 'lax', secure })
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Fetch Metadata: a request with the cookie that the browser says another site made (a link, a form, an
 * image, a script) gets nothing, whatever its method: the pipeline's steps are GETs (`agg_refresh`,
 * `revert_document`), and a cross-site link would run them. A URL typed or bookmarked (`none`) and this
 * origin's own requests pass.
 */
export function assertNotCrossSite(request: FastifyRequest, credential = 'a session cookie'): void {
  // Header values are case-insensitive tokens; a header sent twice (or as a list) is refused if any part says another site.
  const header = request.headers['sec-fetch-site']
  const values = [header ?? []].flat().flatMap((value) => value.split(',').map((part) => part.trim().toLowerCase()))
  const site = values.find((value) => value === 'cross-site' || value === 'same-site')
  if (site) {
    throw forbidden(`A request with ${credential} must come from this origin's pages (Sec-Fetch-Site: ${site})`, 'CROSS_SITE_REFUSED')
  }
}

/**
 * CSRF: a request that changes something with a cookie must come from this origin. Browsers send
 * `Origin` on every cross-site and same-site POST, PATCH and DELETE; when it is absent, `Referer`'s
 * origin is asked; with neither, the request is refused (a script or curl uses a key instead).
 */
export function assertSameOrigin(request: FastifyRequest): void {
  if (SAFE.has(request.method)) return
  // Compared as URL origins, so a default port written or not (`:443`, `:80`) is the same origin.
  const expected = originOf(`${request.protocol}://${request.host}`)
  // An Origin that is present decides alone: `null` (a sandboxed frame, a privacy-redirected page) is
  // an opaque origin, never this one, and must not fall back to a Referer it may also control.
  const origin = request.headers.origin !== undefined ? originOf(request.headers.origin) : originOf(request.headers.referer)
  if (origin !== expected) {
    throw forbidden(
      `A change made with a session cookie must come from ${expected} (Origin: ${origin ?? 'none'}); scripts authenticate with an API key`,
      'CROSS_SITE_REFUSED',
    )
  }
}

function originOf(url: string | undefined): string | undefined {
  if (!url) return undefined
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}
