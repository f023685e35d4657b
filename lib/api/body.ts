// Write bodies (resource-api §11.1): each value is coerced by its column's kind and checked against the
// constraints of the same TypeBox schema (maxLength, enum, pattern). Unknown keys are refused; read-only
// keys are ignored so that a GET → edit → PATCH round trip works.
import { badRequest, validationError, ApiError } from '../core/errors.js'
import type { ColumnMeta } from '../../schemas/columns.js'
import type { BodyEncoding, Resource, Row } from './resource.js'
import { isInt32, parseBoolean, parseDate, parseFloatStrict, parseInteger, parseTimestamp } from '../core/values.js'

function coerceValue(field: string, meta: ColumnMeta, value: unknown, encoding: BodyEncoding): unknown {
  if (encoding === 'form' && typeof value === 'string') {
    if (value === 'null' || value === 'None') value = null
    else if (value === '' && meta.nullable && meta.kind !== 'string') value = null
  }
  if (value === null) {
    if (!meta.nullable) throw badRequest('NOT_NULL_VIOLATION', `${field} may not be null`)
    return null
  }
  if (Array.isArray(value) && encoding === 'form') throw validationError(field, 'must be a single value')
  switch (meta.kind) {
    case 'integer':
    case 'related': {
      const n = typeof value === 'number' ? value : typeof value === 'string' ? parseInteger(value) : undefined
      if (n === undefined || !Number.isInteger(n)) throw validationError(field, 'must be an integer')
      if (!isInt32(n)) throw validationError(field, 'must be a 32-bit integer')
      return n
    }
    case 'float': {
      const n = typeof value === 'number' ? value : typeof value === 'string' ? parseFloatStrict(value) : undefined
      if (n === undefined || !Number.isFinite(n)) throw validationError(field, 'must be a finite number')
      return n
    }
    case 'boolean': {
      const b = typeof value === 'boolean' ? value : typeof value === 'string' ? parseBoolean(value) : undefined
      if (b === undefined) throw validationError(field, 'must be a boolean')
      return b
    }
    case 'date': {
      const date = typeof value === 'string' ? parseDate(value) : undefined
      if (date === undefined) throw validationError(field, 'must be a date YYYY-MM-DD')
      return date
    }
    case 'datetime': {
      const timestamp = typeof value === 'string' ? parseTimestamp(value) : undefined
      if (timestamp === undefined) throw validationError(field, 'must be an ISO 8601 date-time')
      return timestamp
    }
    case 'json': {
      let parsed = value
      if (typeof value === 'string') {
        try {
          parsed = JSON.parse(value)
        } catch {
          throw validationError(field, 'invalid JSON')
        }
      }
      // jsonb refuses \u0000 in any string of the value, as text refuses NUL.
      if (JSON.stringify(parsed).includes('\\u0000')) throw validationError(field, 'must not contain NUL characters')
      return parsed
    }
    case 'string': {
      if (typeof value === 'number' || typeof value === 'boolean') value = String(value)
      if (typeof value !== 'string') throw validationError(field, 'must be a string')
      const text = value as string
      if (meta.maxLength !== undefined && [...text].length > meta.maxLength) {
        throw validationError(field, `must be at most ${meta.maxLength} characters`)
      }
      if (meta.enum && !meta.enum.includes(text)) throw validationError(field, `must be one of ${meta.enum.join(', ')}`)
      if (meta.pattern && !new RegExp(meta.pattern).test(text)) throw validationError(field, `must match ${meta.pattern}`)
      if (text.includes('\u0000')) throw validationError(field, 'must not contain NUL characters')
      return text
    }
  }
}

export function ensureObject(body: unknown): Row {
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw validationError('body', 'must be a JSON object')
  }
  return body as Row
}

/**
 * Coerces the writable keys of `body`; throws UNKNOWN_FIELD / VALIDATION_ERROR naming the key.
 * A column outside the resource's `writable` list is refused unless it merely echoes the stored
 * value (PATCH) or is null (POST), so a GET → edit → PATCH round trip still works.
 */
export function coerceBody(resource: Resource, body: Row, encoding: BodyEncoding, existing?: Row): Row {
  const values: Row = {}
  for (const [key, value] of Object.entries(body)) {
    if (key === 'id') continue
    const meta = resource.columns[key]
    if (meta) {
      if (meta.readonly) continue
      if (resource.writable && !resource.writable.includes(key)) {
        const echo = existing ? existing[key] !== undefined && String(existing[key]) === String(value) : value === null
        if (!echo) throw validationError(key, existing ? 'cannot be changed' : `cannot be set on ${resource.name}`)
        continue
      }
      values[key] = coerceValue(key, meta, value, encoding)
      continue
    }
    // Join fields and synthetic fields are read-only echoes of a GET; write-only fields are turned into columns by writeOnlyColumns.
    if (resource.query_fields.includes(key) || key in resource.synthetic || key in resource.write_only) continue
    throw badRequest('UNKNOWN_FIELD', `Unknown field ${key}`)
  }
  return values
}

/** §11.2 step 2: every required field present and non-null; all missing ones named together. */
export function checkRequiredFields(resource: Resource, body: Row): void {
  const missing = resource.required_fields_for_post.filter((f) => body[f] === undefined || body[f] === null)
  if (missing.length) {
    throw new ApiError(400, 'MISSING_REQUIRED_FIELD', `Missing required field ${missing.join(', ')}`, { missing })
  }
}

/** The column values of the body's write-only fields (a password becomes its hash). */
export async function writeOnlyColumns(resource: Resource, body: Row): Promise<Row> {
  const values: Row = {}
  for (const [key, field] of Object.entries(resource.write_only)) {
    if (body[key] !== undefined) Object.assign(values, await field.columns(body[key]))
  }
  return values
}
