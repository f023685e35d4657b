// Small request helpers so scenarios read like the spec: `await api.get('/campaign/?limit=2')`.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { admin } from './helper.js'

export interface Response {
  status: number
  headers: LightMyRequestResponse['headers']
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer of any shape, read by the test that asked
  body: any
  text: string
}

type Headers = Record<string, string>

export function client(app: FastifyInstance, defaultHeaders: Headers = admin) {
  async function request(method: string, path: string, payload?: unknown, headers: Headers = defaultHeaders): Promise<Response> {
    const url =
      path.startsWith('/api/') ||
      !path.startsWith('/') ||
      path.startsWith('/documentation') ||
      path === '/' ||
      path.startsWith('/health') ||
      path.startsWith('/detect')
        ? path
        : `/api/v1${path}`
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(payload === undefined ? {} : typeof payload === 'string' ? { payload } : { payload: payload as object }),
    })
    let body: unknown
    try {
      body = res.body ? JSON.parse(res.body) : undefined
    } catch {
      body = undefined
    }
    return { status: res.statusCode, headers: res.headers, body, text: res.body }
  }
  return {
    get: (path: string, headers?: Headers) => request('GET', path, undefined, headers),
    post: (path: string, payload?: unknown, headers?: Headers) => request('POST', path, payload, headers),
    patch: (path: string, payload?: unknown, headers?: Headers) => request('PATCH', path, payload, headers),
    put: (path: string, payload?: unknown, headers?: Headers) => request('PUT', path, payload, headers),
    delete: (path: string, headers?: Headers) => request('DELETE', path, undefined, headers),
    request,
  }
}
