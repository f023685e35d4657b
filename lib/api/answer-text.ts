// The text of a row's answers, written from the resource's response schemas by fast-json-stringify (what
// Fastify compiles for a route's response): a detail as it is kept and hashed into its ETag, and a
// write's answer as a retried write keeps it. A list's rows are written by PostgreSQL (lib/api/crud.ts).
import fastJson from 'fast-json-stringify'
import type { Resource, Row } from './resource.js'
import { detailSchema, writeAnswerSchema } from './openapi.js'

interface Writers {
  detail: (row: Row) => string
  write: (row: Row) => string
}

// Compiled at a resource's first answer, once per process.
const compiled = new WeakMap<Resource, Writers>()

function writersOf(resource: Resource): Writers {
  let writers = compiled.get(resource)
  if (!writers) {
    writers = { detail: fastJson(detailSchema(resource) as object), write: fastJson(writeAnswerSchema(resource) as object) }
    compiled.set(resource, writers)
  }
  return writers
}

/** A row's detail as JSON text: what its GET answers and its ETag hashes. */
export const detailText = (resource: Resource, row: Row) => writersOf(resource).detail(row)

/** A POST's or PATCH's answer as JSON text: the detail and the fields the resource's writes add. */
export const writeAnswerText = (resource: Resource, row: Row) => writersOf(resource).write(row)
