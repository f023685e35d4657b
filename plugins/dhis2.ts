// DHIS2's own path for data values, so that a script written for a ministry's DHIS2 imports here by
// changing its base URL: `POST /api/dataValueSets` takes a data value set as JSON, CSV or ADX XML, with
// this API's keys and sessions, `Authorization: ApiToken <key>` and HTTP Basic, and answers DHIS2's import summary
// (lib/dhis2/import.ts): 200 once the import ran, its status WARNING and its conflicts when values were
// set aside, as DHIS2 answered before 2.38 (a 4xx here is always the API's error: docs/decisions.md).
import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { neutralise } from '../lib/api/csv-export.js'
import { authenticatedUser } from '../lib/api/request.js'
import { stringify } from 'csv-stringify/sync'
import { badRequest } from '../lib/core/errors.js'
import { type DataValue, text, valuesOfJson } from '../lib/dhis2/data-values.js'
import { adxWriter } from '../lib/dhis2/adx.js'
import { readDataValues } from '../lib/dhis2/read.js'
import { type DataValueOut, exportDataValues } from '../lib/dhis2/export.js'
import { type IdScheme, type IdSchemes, type ImportOptions, type ImportSummary, importDataValues } from '../lib/dhis2/import.js'
import { assertMayCall } from '../lib/engine/access.js'
import campaignDatapoint from '../resources/campaign_datapoint.js'

/** The largest data value set a request may send (413 past it, as every body past its limit). */
const DATA_VALUE_SET_LIMIT_BYTES = 2 * 1024 * 1024

/** The query of an import: DHIS2's parameters, those this API honours. */
type ImportQuery = Record<string, string | undefined>

/**
 * The identifier schemes a query names (idScheme, and orgUnitIdScheme and dataElementIdScheme over it,
 * as DHIS2 reads them), `general` where it names none; a 400 for a scheme this API cannot match.
 */
function schemesOf(query: Record<string, string | string[] | undefined>, general: IdScheme): IdSchemes {
  const schemeOf = (name: string): IdScheme | undefined => {
    const given = [query[name]].flat()[0]
    const scheme = given?.toUpperCase()
    if (scheme === undefined || scheme === 'UID' || scheme === 'CODE' || scheme === 'NAME') return scheme
    throw badRequest('INVALID_PARAMETER', `${name} ${given}: UID, CODE or NAME (no attribute is kept here, so ATTRIBUTE schemes have nothing to match)`)
  }
  const all = schemeOf('idScheme') ?? general
  return { orgUnit: schemeOf('orgUnitIdScheme') ?? all, dataElement: schemeOf('dataElementIdScheme') ?? all }
}

/** The import's options from its query, or a 400 naming a parameter this API does not honour. */
function importOptions(query: ImportQuery) {
  const dryRun = (query.dryRun ?? 'false').toLowerCase()
  if (dryRun !== 'true' && dryRun !== 'false') throw badRequest('INVALID_PARAMETER', 'dryRun: true or false')
  const strategy = (query.importStrategy ?? 'CREATE_AND_UPDATE').toUpperCase().replace('NEW_AND_UPDATES', 'CREATE_AND_UPDATE')
  if (!['CREATE_AND_UPDATE', 'CREATE', 'UPDATE', 'DELETE'].includes(strategy)) {
    throw badRequest('INVALID_PARAMETER', `importStrategy ${strategy}: CREATE_AND_UPDATE, CREATE, UPDATE or DELETE`)
  }
  const schemes = schemesOf(query, 'UID')
  if ((query.async ?? 'false').toLowerCase() !== 'false') throw badRequest('INVALID_PARAMETER', 'async: only false (the import answers when done)')
  return { dryRun: dryRun === 'true', importStrategy: strategy as ImportOptions['importStrategy'], schemes }
}

/** DHIS2's envelope around an import summary. */
function envelope(summary: ImportSummary) {
  const conflicted = summary.conflicts.length > 0
  return {
    httpStatus: 'OK',
    httpStatusCode: 200,
    status: conflicted ? 'WARNING' : 'OK',
    message: conflicted ? 'One or more conflicts encountered, please check import summary.' : 'Import was successful.',
    response: summary,
  }
}

const summarySchema = {
  type: 'object',
  description: "DHIS2's import summary in its envelope (httpStatus, httpStatusCode, status, message, response)",
  required: ['httpStatus', 'httpStatusCode', 'status', 'message', 'response'],
  properties: {
    httpStatus: { type: 'string' },
    httpStatusCode: { type: 'integer' },
    status: { type: 'string', enum: ['OK', 'WARNING'] },
    message: { type: 'string' },
    response: {
      type: 'object',
      additionalProperties: true,
      required: ['responseType', 'status', 'importCount', 'conflicts'],
      properties: {
        responseType: { type: 'string' },
        status: { type: 'string', enum: ['SUCCESS', 'WARNING'] },
        importCount: {
          type: 'object',
          required: ['imported', 'updated', 'ignored', 'deleted'],
          properties: { imported: { type: 'integer' }, updated: { type: 'integer' }, ignored: { type: 'integer' }, deleted: { type: 'integer' } },
        },
        conflicts: {
          type: 'array',
          items: {
            type: 'object',
            required: ['object', 'value', 'indexes'],
            properties: { object: { type: 'string' }, value: { type: 'string' }, indexes: { type: 'array', items: { type: 'integer' } } },
          },
        },
        document_id: { type: 'integer', description: 'the document the values were stored as (its report, history and revert are an upload’s)' },
        document_ids: {
          type: 'array',
          items: { type: 'integer' },
          description: 'every document the values were stored as: values at campaigns and dated values are a document each',
        },
      },
    },
  },
}

/** ADX's media type, and the spelling DHIS2's documentation also uses. */
const ADX_TYPES = ['application/adx+xml', 'application/xml+adx']

/**
 * The set's values, read as its Content-Type says: JSON as Fastify parsed it; CSV and ADX, kept as text
 * by their parsers, read in a worker thread (lib/dhis2/read.ts).
 */
async function valuesOf(request: FastifyRequest, owner: string): Promise<DataValue[]> {
  if (typeof request.body !== 'string') return valuesOfJson(request.body)
  const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  return readDataValues(owner, { format: ADX_TYPES.includes(type) ? 'adx' : 'csv', body: request.body })
}

async function importSet(app: FastifyInstance, request: FastifyRequest<{ Querystring: ImportQuery }>, reply: FastifyReply) {
  const user = authenticatedUser(request)
  assertMayCall(user, campaignDatapoint, 'POST')
  const options = importOptions(request.query)
  const values = await valuesOf(request, `user ${user.id}`)
  const summary = await importDataValues(app.config, user, values, options, (work) =>
    app.transactions.attributed({ via: 'job', userId: user.id, requestId: request.id }, work),
  )
  return reply.send(envelope(summary))
}

/** A query parameter as a list: repeated, or one value with commas; each checked as a value set's fields are (no NUL, 255 characters at most). */
const listOf = (value: string | string[] | undefined, name = 'a parameter') =>
  (Array.isArray(value) ? value : value ? [value] : [])
    .flatMap((v) => v.split(','))
    .map((v) => text(v, name) ?? '')
    .filter(Boolean)

/** The format the reader asks for: by the path's extension, else by Accept (JSON by default). */
function formatAsked(request: FastifyRequest): 'json' | 'csv' | 'adx' {
  const path = request.url.split('?')[0]
  if (path.endsWith('.csv')) return 'csv'
  if (path.endsWith('.json')) return 'json'
  const accept = request.headers.accept ?? ''
  if (/\bapplication\/(adx\+xml|xml\+adx)\b/.test(accept)) return 'adx'
  return /\b(application|text)\/csv\b/.test(accept) ? 'csv' : 'json'
}

/** DHIS2's CSV columns, in its order. */
const CSV_COLUMNS = ['dataelement', 'period', 'orgunit', 'categoryoptioncombo', 'attributeoptioncombo', 'value']

/** A page of values as DHIS2's CSV lines. */
const csvLines = (values: DataValueOut[]) =>
  // Neutralised as every CSV export is: a code a spreadsheet would run as a formula gets a leading '.
  stringify(values.map((v) => [v.dataElement, v.period, v.orgUnit, '', '', v.value].map(neutralise)))

/** A page of values as the JSON of DHIS2's dataValues, each page after the first led by a comma. */
const jsonValues = (values: DataValueOut[], first: boolean) => (first ? '' : ',') + values.map((v) => JSON.stringify(v)).join(',')

/** The export's text in parts: its opening, its pages of values as they are read, its end. */
async function* streamed(pages: AsyncGenerator<DataValueOut[]>, head: string, page: (values: DataValueOut[], first: boolean) => string, tail: string) {
  yield head
  let first = true
  for await (const values of pages) {
    yield page(values, first)
    first = false
  }
  yield tail
}

type ExportQuery = Record<string, string | string[] | undefined>

async function exportSet(app: FastifyInstance, request: FastifyRequest<{ Querystring: ExportQuery }>, reply: FastifyReply) {
  const user = authenticatedUser(request)
  assertMayCall(user, campaignDatapoint, 'GET')
  const q = request.query
  const one = (name: string) => listOf(q[name])[0]
  const { pages, campaignOfPeriod } = await exportDataValues(app.db.db, user, {
    dataElements: listOf(q.dataElement, 'dataElement'),
    orgUnits: listOf(q.orgUnit, 'orgUnit'),
    children: ['true', '1'].includes(one('children')?.toLowerCase() ?? ''),
    periods: listOf(q.period, 'period'),
    startDate: one('startDate'),
    endDate: one('endDate'),
    // Codes by default, as the data browser's link and the import read them; DHIS2's own default is UID.
    schemes: schemesOf(q, 'CODE'),
  })
  // Streamed as the values are read, a page of places at a time: a country's values never held whole.
  const format = formatAsked(request)
  if (format === 'adx') {
    const adx = adxWriter((period) => campaignOfPeriod.get(period) ?? period)
    return reply.type('application/adx+xml; charset=utf-8').send(Readable.from(streamed(pages, adx.head, adx.groups, adx.tail)))
  }
  if (format === 'csv') {
    const type =
      /\bapplication\/csv\b/.test(request.headers.accept ?? '') || !/\btext\/csv\b/.test(request.headers.accept ?? '') ? 'application/csv' : 'text/csv'
    const head = `${CSV_COLUMNS.join(',')}\n`
    return reply.type(`${type}; charset=utf-8`).send(Readable.from(streamed(pages, head, csvLines, '')))
  }
  return reply.type('application/json; charset=utf-8').send(Readable.from(streamed(pages, '{"dataValues":[', jsonValues, ']}')))
}

const exportSchema = {
  tags: ['dhis2'],
  operationId: 'exportDataValueSet',
  summary:
    'The values entered or uploaded (never computed totals) as a DHIS2 data value set: JSON, CSV (.csv, or Accept: application/csv) or ADX (Accept: application/adx+xml)',
  security: API_SECURITY,
  querystring: {
    type: 'object',
    properties: {
      dataElement: { type: 'array', items: { type: 'string' }, description: 'repeatable: a code mapped to an indicator, its short name, or its UID' },
      orgUnit: { type: 'array', items: { type: 'string' }, description: 'repeatable: a location code, a code mapped to it, or its UID' },
      idScheme: { type: 'string', description: 'how the values name units and data elements: CODE (by default), UID or NAME' },
      orgUnitIdScheme: { type: 'string', description: 'CODE, UID or NAME, over idScheme' },
      dataElementIdScheme: { type: 'string', description: 'CODE, UID or NAME, over idScheme' },
      children: { type: 'string', description: 'true: each orgUnit with its whole subtree' },
      period: { type: 'array', items: { type: 'string' }, description: 'repeatable: the campaigns that start in it (20261015, 2026W42, 202610, 2026Q4, 2026)' },
      startDate: { type: 'string', description: 'the campaigns that start on or after this day (YYYY-MM-DD)' },
      endDate: { type: 'string', description: 'the campaigns that start on or before this day' },
    },
  },
  response: {
    200: {
      description: 'A data value set',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['dataValues'],
            properties: {
              dataValues: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['dataElement', 'period', 'orgUnit', 'value'],
                  properties: { dataElement: { type: 'string' }, period: { type: 'string' }, orgUnit: { type: 'string' }, value: { type: 'string' } },
                },
              },
            },
          },
        },
        'application/csv': { schema: { type: 'string', description: "DHIS2's CSV columns, its header first" } },
        'text/csv': { schema: { type: 'string', description: 'the same CSV, for a client that asks for text/csv' } },
        'application/adx+xml': {
          schema: { type: 'string', description: 'ADX: a group per organisation unit and period (ISO 8601, 2026-10-01/P1M), its data set the campaign' },
        },
      },
    },
    400: errorSchema,
    401: errorSchema,
    403: errorSchema,
  },
}

const importSchema = {
  tags: ['dhis2'],
  operationId: 'importDataValueSet',
  summary: 'Import a DHIS2 data value set (JSON, CSV as application/csv, or ADX as application/adx+xml) through the upload pipeline; DHIS2’s import summary',
  security: API_SECURITY,
  // Described, not constrained: the readers name what they cannot read (lib/dhis2/data-values.ts, adx.ts).
  body: {
    content: {
      'application/json': {
        // No type: its reader's 400s name what is wrong better than a schema's would.
        schema: {
          description:
            'dataValues (dataElement, period, orgUnit, categoryOptionCombo, value, comment), and the set’s period and orgUnit for values that name none',
        },
      },
      'application/csv': {
        schema: {
          type: 'string',
          description: 'DHIS2’s CSV: dataelement, period, orgunit, categoryoptioncombo, attributeoptioncombo, value…, with or without its header',
        },
      },
      'text/csv': { schema: { type: 'string', description: 'the same CSV' } },
      'application/adx+xml': {
        schema: { type: 'string', description: 'ADX: <group orgUnit period dataSet> elements of <dataValue dataElement value/>' },
      },
      'application/xml+adx': { schema: { type: 'string', description: 'ADX, under the name DHIS2’s documentation also uses' } },
    },
  },
  // Described, not constrained: the handler names what it does not honour (importOptions).
  querystring: {
    type: 'object',
    properties: {
      dryRun: { type: 'string', description: 'true: check and count, keep nothing (false by default)' },
      importStrategy: {
        type: 'string',
        description:
          'CREATE_AND_UPDATE (by default); CREATE leaves the values already stored as they are; UPDATE writes only those; DELETE deletes them (their totals recomputed)',
      },
      idScheme: {
        type: 'string',
        description: 'UID (by default) or CODE: each identifier found through the mapping of codes; NAME: by the location’s or indicator’s name',
      },
      orgUnitIdScheme: { type: 'string', description: 'UID, CODE or NAME, over idScheme' },
      dataElementIdScheme: { type: 'string', description: 'UID, CODE or NAME, over idScheme' },
      async: { type: 'string', description: 'false (the import answers when done)' },
    },
  },
  response: {
    200: summarySchema,
    400: errorSchema,
    401: errorSchema,
    403: errorSchema,
    413: errorSchema,
    415: errorSchema,
    422: errorSchema,
    429: errorSchema,
  },
}

export default fp(
  async function dhis2(app: FastifyInstance) {
    // CSV as DHIS2 sends it; JSON by the API's own parser. Only in this plugin's routes.
    // A user's imports in progress are counted with the same limit as her uploads (429 past it): each
    // holds its body and a transaction for the whole pipeline.
    const gate = app.uploadGate
    gate.countIn(app)
    for (const type of ['application/csv', 'text/csv', ...ADX_TYPES]) {
      app.addContentTypeParser(type, { parseAs: 'string' }, (_request, body, done) => done(null, body))
    }
    app.post<{ Querystring: ImportQuery }>(
      '/api/dataValueSets',
      {
        // A set is read whole (as a request's JSON is): about 20,000 values at most; a larger one is sent in parts.
        bodyLimit: DATA_VALUE_SET_LIMIT_BYTES,
        schema: importSchema,
      },
      gate.holding((request: FastifyRequest<{ Querystring: ImportQuery }>, reply: FastifyReply) => importSet(app, request, reply)),
    )
    for (const path of ['/api/dataValueSets', '/api/dataValueSets.json', '/api/dataValueSets.csv']) {
      app.get<{ Querystring: ExportQuery }>(path, { schema: { ...exportSchema, hide: path !== '/api/dataValueSets' } }, (request, reply) =>
        exportSet(app, request, reply),
      )
    }
  },
  // Encapsulated: its CSV parsers stay with its routes.
  { name: 'dhis2', dependencies: ['db', 'auth', 'reads'], encapsulate: true },
)
