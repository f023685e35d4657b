// The text of answers, written from their response schemas by fast-json-stringify: every route's (the
// app's serializer compiler), a row's detail as it is kept and hashed into its ETag, and a write's
// answer as a retried write keeps it. A list's rows are written by PostgreSQL (lib/api/crud.ts).
import fastJson from 'fast-json-stringify'
import type { Resource, Row } from './resource.js'
import { detailSchema, ERROR_ENVELOPE, writeAnswerSchema } from './openapi.js'

type Write = (data: unknown) => string

// One writer per distinct schema in the process: the dispatcher's routes repeat the same answers
// (every error is the one envelope), and each app a test builds registers them all again.
const writers = new Map<string, Write>()

function writerOf(schema: unknown): Write {
  const key = JSON.stringify(schema)
  let write = writers.get(key)
  if (!write) {
    // The envelope every error answer refers to (`$ref: 'Error#'`, plugins/external.ts).
    write = fastJson(schema as fastJson.Schema, { schema: { [ERROR_ENVELOPE.$id]: ERROR_ENVELOPE as fastJson.Schema } }) as Write
    writers.set(key, write)
  }
  return write
}

/**
 * The app's serializer compiler (Fastify's `setSerializerCompiler`): fast-json-stringify, as Fastify's
 * own, compiled at a route's first answer of a status rather than when the app starts. Fastify asks
 * for every status of every route as the app gets ready (the dispatcher's aliases, methods and error
 * answers included): compiling them all made each start ~250 ms longer (2-core machine), for answers
 * most processes never give.
 */
export function serializerCompiler({ schema }: { schema: unknown }): Write {
  let write: Write | undefined
  return (data) => (write ??= writerOf(schema))(data)
}

interface Writers {
  detail: (row: Row) => string
  write: (row: Row) => string
}

// Compiled at a resource's first answer, once per process.
const compiled = new WeakMap<Resource, Writers>()

function writersOf(resource: Resource): Writers {
  let writers = compiled.get(resource)
  if (!writers) {
    writers = { detail: writerOf(detailSchema(resource)), write: writerOf(writeAnswerSchema(resource)) }
    compiled.set(resource, writers)
  }
  return writers
}

/** A row's detail as JSON text: what its GET answers and its ETag hashes. */
export const detailText = (resource: Resource, row: Row) => writersOf(resource).detail(row)

/** A POST's or PATCH's answer as JSON text: the detail and the fields the resource's writes add. */
export const writeAnswerText = (resource: Resource, row: Row) => writersOf(resource).write(row)
