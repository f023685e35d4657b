// DHIS2's metadata path (`/api/metadata`) for the organisation-unit tree, its levels and data elements,
// so that a ministry's DHIS2 export sets up the places and indicators here, with DHIS2's UIDs mapped to
// them (a data value set naming them then imports), and this API's tree goes back out as DHIS2 reads it
// (lib/dhis2/metadata-*.ts). The import writes through the resources' own writes (lib/api/crud.ts), as the
// requester: her permissions and every hook hold as for /api/v1. Answers are DHIS2's ImportReport, 200
// once the import ran (a 4xx here is always the API's error: docs/decisions.md, "DHIS2 exchange").
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import type { DB } from '../schemas/index.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { authenticatedUser } from '../lib/api/request.js'
import { ApiError } from '../lib/core/errors.js'
import { createRow, updateRow } from '../lib/api/crud.js'
import { QueryParams } from '../lib/api/query-params.js'
import type { Context } from '../lib/api/resource.js'
import type { AuthUser } from '../lib/data/auth.js'
import { exportMetadata, metadataExportAsked } from '../lib/dhis2/metadata-export.js'
import { importMetadata, type MetadataKind, type ResourceDoors } from '../lib/dhis2/metadata-import.js'
import { metadataImportOptions, readMetadataPayload } from '../lib/dhis2/metadata-payload.js'
import { assertMayCall } from '../lib/engine/access.js'
import geo from '../resources/geo.js'
import indicator from '../resources/indicator.js'
import location from '../resources/location.js'
import locationType from '../resources/location_type.js'
import sourceObjectMap from '../resources/source_object_map.js'

/** The largest metadata payload a request may send (413 past it): a country's tree with its shapes; a larger one goes in parts. */
const METADATA_LIMIT_BYTES = 32 * 1024 * 1024

const RESOURCES = { location, location_type: locationType, geo, indicator, source_object_map: sourceObjectMap }

/** What each type of the payload is written as: a request naming only types its sender may write none of is refused whole. */
const WRITTEN_AS = { levels: locationType, units: location, elements: indicator }

type Query = Record<string, string | undefined>

/** Whether `user` may call `method` of `resource` (the role check alone). */
function mayCall(user: AuthUser, resource: Parameters<typeof assertMayCall>[1], method: 'POST' | 'PATCH') {
  try {
    assertMayCall(user, resource, method)
    return true
  } catch (error) {
    if (error instanceof ApiError) return false
    throw error
  }
}

/** The resources' POST and PATCH as `user`, in `trx`: each checks who may call it, then writes with its hooks. */
function doorsOf(app: FastifyInstance, request: FastifyRequest, user: AuthUser, trx: Kysely<DB>): ResourceDoors {
  const context = (kind: MetadataKind): Context => ({
    db: trx,
    user,
    // The writes read no parameter: the import's own query is not theirs.
    query: new QueryParams([]),
    params: {},
    config: app.config,
    resource: RESOURCES[kind],
    urlName: kind,
    jobs: app.jobs,
    requestId: request.id,
  })
  return {
    may: (kind, method) => mayCall(user, RESOURCES[kind], method),
    create: async (kind, body) => {
      assertMayCall(user, RESOURCES[kind], 'POST')
      return createRow(context(kind), body, 'json')
    },
    update: async (kind, id, body) => {
      assertMayCall(user, RESOURCES[kind], 'PATCH')
      return updateRow(context(kind), id, body, 'json')
    },
  }
}

async function importPayload(app: FastifyInstance, request: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply) {
  const user = authenticatedUser(request)
  const options = metadataImportOptions(request.query)
  // A form (curl -d without a content type) would read as one odd key and import nothing, answered OK.
  const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (type !== 'application/json') {
    throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type ${type || '(none)'}: metadata is imported as application/json`)
  }
  const payload = readMetadataPayload(request.body)
  const present = (Object.keys(WRITTEN_AS) as Array<keyof typeof WRITTEN_AS>).filter((type) => payload[type]?.length)
  // Someone who may write none of what she sends is told so at once (403), as for a write of /api/v1;
  // otherwise each object she may not write is an error of the report.
  if (present.length && !present.some((type) => mayCall(user, WRITTEN_AS[type], 'POST'))) assertMayCall(user, WRITTEN_AS[present[0]], 'POST')
  const report = await importMetadata(user, payload, options, (work) =>
    app.transactions.attributed({ via: 'job', userId: user.id, requestId: request.id }, (trx) => work(trx, doorsOf(app, request, user, trx))),
  )
  return reply.send(report)
}

async function exportPayload(app: FastifyInstance, request: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply) {
  const user = authenticatedUser(request)
  assertMayCall(user, location, 'GET')
  assertMayCall(user, indicator, 'GET')
  return reply.send(await exportMetadata(app.db.db, user, metadataExportAsked(request.query)))
}

const stats = {
  type: 'object',
  required: ['created', 'updated', 'deleted', 'ignored', 'total'],
  properties: {
    created: { type: 'integer' },
    updated: { type: 'integer' },
    deleted: { type: 'integer' },
    ignored: { type: 'integer' },
    total: { type: 'integer' },
  },
}

const errorReports = {
  type: 'array',
  items: {
    type: 'object',
    required: ['message', 'mainKlass', 'errorCode'],
    properties: { message: { type: 'string' }, mainKlass: { type: 'string' }, errorCode: { type: 'string' }, errorProperty: { type: 'string' } },
  },
}

const text = { type: 'string' }

const reportSchema = {
  type: 'object',
  description: "DHIS2's ImportReport: per type, what was created, updated or ignored, and each object's errors (and this API's warnings)",
  required: ['importParams', 'status', 'typeReports', 'stats', 'ignoredTypes'],
  properties: {
    importParams: {
      type: 'object',
      required: ['importMode', 'identifier', 'importStrategy', 'atomicMode', 'importReportMode', 'username'],
      properties: { importMode: text, identifier: text, importStrategy: text, atomicMode: text, importReportMode: text, username: text },
    },
    status: { type: 'string', enum: ['OK', 'WARNING', 'ERROR'] },
    typeReports: {
      type: 'array',
      items: {
        type: 'object',
        required: ['klass', 'stats', 'objectReports'],
        properties: {
          klass: text,
          stats,
          objectReports: {
            type: 'array',
            items: {
              type: 'object',
              required: ['klass', 'index', 'errorReports'],
              properties: { klass: text, index: { type: 'integer' }, uid: text, displayName: text, errorReports, warningReports: errorReports },
            },
          },
        },
      },
    },
    stats,
    ignoredTypes: { type: 'array', items: text, description: 'the payload’s keys this API does not import' },
  },
}

const importSchema = {
  tags: ['dhis2'],
  operationId: 'importMetadata',
  summary: 'Import DHIS2 metadata: organisation units (the location tree and shapes), their levels and data elements (indicators); DHIS2’s ImportReport',
  security: API_SECURITY,
  // Described, not constrained: the handler names a value it does not honour (metadataImportOptions).
  querystring: {
    type: 'object',
    properties: {
      importMode: { type: 'string', description: 'COMMIT (default) or VALIDATE: run the import, keep nothing' },
      identifier: { type: 'string', description: 'UID (default), CODE or AUTO (UID, then code): how objects are matched to rows' },
      importStrategy: { type: 'string', description: 'CREATE_AND_UPDATE (default), CREATE (existing ones ignored) or UPDATE (new ones ignored)' },
      atomicMode: { type: 'string', description: 'ALL (default: an error keeps nothing) or NONE (every object that can be is imported)' },
      importReportMode: { type: 'string', description: 'ERRORS (default: objects with errors or warnings), FULL (every object) or DEBUG (with names)' },
      dryRun: { type: 'string', description: 'true: as importMode=VALIDATE' },
      async: { type: 'string', description: 'false (the import answers when done)' },
    },
  },
  // Described, not constrained: readMetadataPayload names what it cannot read (a 400 per object).
  body: {
    content: {
      'application/json': {
        // No type: its reader's 400s name what is wrong better than a schema's would.
        schema: {
          description: 'a JSON object, DHIS2 metadata: organisationUnitLevels, organisationUnits and dataElements lists (other keys ignored, listed)',
        },
      },
    },
  },
  response: { 200: reportSchema, 400: errorSchema, 401: errorSchema, 403: errorSchema, 413: errorSchema, 415: errorSchema, 429: errorSchema },
}

const geometry = {
  type: 'object',
  required: ['type', 'coordinates'],
  properties: { type: { type: 'string', enum: ['Polygon', 'MultiPolygon', 'Point'] }, coordinates: { type: 'array', items: {} } },
}

const exportSchema = {
  tags: ['dhis2'],
  operationId: 'exportMetadata',
  summary: 'The location tree (what the reader may read), its levels and the data elements as DHIS2 metadata, each object by its UID',
  security: API_SECURITY,
  querystring: {
    type: 'object',
    properties: Object.fromEntries(
      ['organisationUnitLevels', 'organisationUnits', 'dataElements'].map((name) => [
        name,
        { type: 'string', description: 'true: this type (and the others set true) only; false: all but it' },
      ]),
    ),
  },
  response: {
    200: {
      description: "DHIS2's metadata export",
      type: 'object',
      required: ['system', 'date'],
      properties: {
        system: { type: 'object', required: ['id', 'date'], properties: { id: text, date: text } },
        date: text,
        organisationUnitLevels: {
          type: 'array',
          items: { type: 'object', required: ['id', 'name', 'level'], properties: { id: text, name: text, level: { type: 'integer' } } },
        },
        organisationUnits: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'code', 'name', 'shortName', 'openingDate'],
            properties: {
              id: text,
              code: text,
              name: text,
              shortName: text,
              openingDate: text,
              level: { type: 'integer' },
              parent: { type: 'object', required: ['id'], properties: { id: text } },
              geometry,
            },
          },
        },
        dataElements: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'code', 'name', 'shortName', 'valueType', 'aggregationType', 'domainType'],
            properties: { id: text, code: text, name: text, shortName: text, valueType: text, aggregationType: text, domainType: text, description: text },
          },
        },
      },
    },
    400: errorSchema,
    401: errorSchema,
    403: errorSchema,
  },
}

export default fp(
  async function dhis2Metadata(app: FastifyInstance) {
    // A user's imports in progress count with her uploads (429 past the limit): each holds its body and
    // a transaction for all its objects.
    const gate = app.uploadGate
    gate.countIn(app)
    for (const path of ['/api/metadata', '/api/metadata.json']) {
      // DHIS2's clients name the format in the path too: the same routes, documented once.
      const hide = path !== '/api/metadata'
      app.post<{ Querystring: Query }>(
        path,
        { bodyLimit: METADATA_LIMIT_BYTES, schema: { ...importSchema, hide } },
        gate.holding((request: FastifyRequest<{ Querystring: Query }>, reply: FastifyReply) => importPayload(app, request, reply)),
      )
      app.get<{ Querystring: Query }>(path, { schema: { ...exportSchema, hide } }, (request, reply) => exportPayload(app, request, reply))
    }
  },
  // Encapsulated: its hooks stay with its routes.
  { name: 'dhis2-metadata', dependencies: ['db', 'auth', 'reads'], encapsulate: true },
)
