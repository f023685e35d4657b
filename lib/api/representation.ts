// What leaves for a GET (RFC 9110 §8.8, §13; RFC 9111): the bytes of an answer, its strong ETag, the
// encodings a client may take (br or gzip above COMPRESS_MIN_BYTES, each with its own ETag), and 304
// for a client that already holds the same bytes. A cached read keeps its representation, so a hit is
// neither hashed nor compressed again (lib/api/read-cache.ts); other answers are prepared as they leave.
import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import { promisify } from 'node:util'
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip } from 'node:zlib'
import { Negotiator } from '@fastify/accept-negotiator'
import type { FastifyReply, FastifyRequest } from 'fastify'

export type Encoding = 'br' | 'gzip'

/** Below this, compression saves less than it costs (a detail, an error). */
export const COMPRESS_MIN_BYTES = 1024

// Brotli at quality 5: 175 KB of datapoint JSON in 4 ms to 14.2 KB, where quality 11 takes 240–570 ms
// for 12.4 KB. What is cached is compressed once, when stored; other answers as they leave.
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }
const compressors: Record<Encoding, (body: Buffer) => Promise<Buffer>> = {
  br: (body) => promisify(brotliCompress)(body, BROTLI),
  gzip: (body) => promisify(gzip)(body),
}
const streamCompressors: Record<Encoding, () => NodeJS.ReadWriteStream> = {
  br: () => createBrotliCompress(BROTLI),
  gzip: () => createGzip(),
}

const negotiator = new Negotiator<Encoding | 'identity'>({ supportedValues: ['br', 'gzip', 'identity'] })

/** The encoding `request` takes (Accept-Encoding, q-values respected), undefined for none. */
export function encodingFor(request: FastifyRequest): Encoding | undefined {
  const header = request.headers['accept-encoding']
  if (!header) return undefined
  const chosen = negotiator.negotiate(header)
  return chosen === 'identity' || chosen === null ? undefined : chosen
}

export interface Representation {
  /** The headers that describe the bytes (type, disposition, counts): sent again with every hit. */
  headers: Record<string, string>
  body: Buffer
  /** The strong validator of `body`: a hash of its bytes (docs/decisions.md, "Read cache"). */
  tag: string
  /** The same bytes encoded, when prepared. */
  encoded: Partial<Record<Encoding, Buffer>>
}

// SHA-1 here names bytes, it protects nothing: 20 bytes of hash in base64url (27 characters).
const hashOf = (body: Buffer | string) => createHash('sha1').update(body).digest('base64url')

/** Prepares `body` to leave; `encodings`: those compressed now (a cached answer takes every one). */
export async function representationOf(body: Buffer, headers: Record<string, string>, encodings: Encoding[]): Promise<Representation> {
  const encoded: Representation['encoded'] = {}
  if (body.length >= COMPRESS_MIN_BYTES) await Promise.all(encodings.map(async (encoding) => (encoded[encoding] = await compressors[encoding](body))))
  return { headers, body, tag: hashOf(body), encoded }
}

/** A short representation prepared now (a detail): hashed once, compressed when a client first asks. */
export function representationNow(body: string, headers: Record<string, string>): Representation {
  const bytes = Buffer.from(body)
  return { headers, body: bytes, tag: hashOf(bytes), encoded: {} }
}

const served = new WeakMap<FastifyRequest, Representation>()

/** Answers with a kept representation: it leaves as it is, its ETag not computed again (plugins/http-cache.ts). */
export function serve(reply: FastifyReply, representation: Representation): FastifyReply {
  served.set(reply.request, representation)
  return reply.send('')
}

/** The kept representation this request is answered with, if any. */
export const servedFor = (request: FastifyRequest) => served.get(request)

/** The bytes a representation holds, every encoding counted (what a cache entry weighs). */
export const sizeOf = (representation: Representation) =>
  representation.body.length + (representation.encoded.br?.length ?? 0) + (representation.encoded.gzip?.length ?? 0)

const etagOf = (tag: string, encoding?: Encoding) => (encoding ? `"${tag}-${encoding}"` : `"${tag}"`)

/** The ETag a GET of `body`'s bytes carries unencoded (a conditional write compares with it, lib/api/preconditions.ts). */
export const tagOfBody = (body: string) => etagOf(hashOf(body))

/** If-None-Match (weak comparison, RFC 9110 §13.1.2): whether the client holds `etag` already. */
function held(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match']
  if (!header) return false
  if (header.trim() === '*') return true
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag)
}

/** Sets the ETag; true (and the answer made a bodiless 304) when the client holds that version. */
function validated(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header('etag', etag)
  if (!held(request, etag)) return false
  reply.code(304).removeHeader('content-type').removeHeader('content-length')
  return true
}

/**
 * A short answer (a detail, most lists' pages) as it leaves: its ETag, or 304. Synchronous: it is on
 * the path of every small GET, where a promise and a copy of the bytes were measurable.
 */
export function answerShort(request: FastifyRequest, reply: FastifyReply, body: string | Buffer): string | Buffer {
  return validated(request, reply, etagOf(hashOf(body))) ? '' : body
}

/**
 * The answer's payload: the encoding the client takes, with its ETag, or nothing with 304 when the
 * client holds it. A promise only when that encoding must be compressed now (else synchronous: a hit).
 */
export function answerWith(request: FastifyRequest, reply: FastifyReply, representation: Representation): Buffer | string | Promise<Buffer> {
  const wanted = representation.body.length >= COMPRESS_MIN_BYTES ? encodingFor(request) : undefined
  if (validated(request, reply, etagOf(representation.tag, wanted))) return ''
  for (const name in representation.headers) reply.header(name, representation.headers[name])
  if (!wanted) return representation.body
  reply.header('content-encoding', wanted).removeHeader('content-length')
  const encoded = representation.encoded[wanted]
  if (encoded) return encoded
  return compressors[wanted](representation.body).then((bytes) => (representation.encoded[wanted] = bytes))
}

/** A streamed answer (a long CSV export): compressed on the way when the client takes it; no ETag. */
export function streamWith(request: FastifyRequest, reply: FastifyReply, stream: Readable): Readable | NodeJS.ReadWriteStream {
  const wanted = encodingFor(request)
  if (!wanted) return stream
  reply.header('content-encoding', wanted).removeHeader('content-length')
  const compressed = streamCompressors[wanted]()
  stream.on('error', (error) => (compressed as unknown as Readable).destroy(error))
  return stream.pipe(compressed)
}
