// A DHIS2 data value set as its Web API sends it (`POST /api/dataValueSets`), read into one list of
// values: JSON (the set's period, orgUnit and attributeOptionCombo apply to values that name none)
// and CSV (with or without DHIS2's header line: dataelement, period, orgunit, categoryoptioncombo,
// attributeoptioncombo, value, storedby, lastupdated, comment). A body this cannot read is a 400 that
// says where.
import { parse } from 'csv-parse/sync'
import { ApiError } from '../core/errors.js'

/** One data value, as sent; `index` its place in the set (DHIS2's conflicts name it). */
export interface DataValue {
  index: number
  dataElement: string
  period: string
  orgUnit: string
  categoryOptionCombo?: string
  attributeOptionCombo?: string
  value: string
  comment?: string
  /** ADX's disaggregation written as categories of its own (`SEX=F AGE=0-4`), which this API does not read. */
  disaggregation?: string
}

const badSet = (message: string) => new ApiError(400, 'BAD_DATA_VALUE_SET', message)

/** The longest identifier or value read (DHIS2's own are 11 to 50 characters; the columns that keep them hold 255). */
const MAX_FIELD = 255
/** A comment, which DHIS2 keeps to 50,000 characters (this API does not keep it). */
const MAX_COMMENT = 50_000

/** A field as text: a string, number or boolean; anything else, a NUL or a field past `max` characters is a 400 naming where. */
export function text(value: unknown, where = 'a field', max = MAX_FIELD): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw badSet(`${where}: a string or a number is required`)
  const field = String(value).trim()
  // PostgreSQL's text holds no NUL: refused here, by name, rather than by the database.
  if (field.includes('\u0000')) throw badSet(`${where}: a NUL character (\\u0000) is not text`)
  if (field.length > max) throw badSet(`${where}: at most ${max} characters`)
  return field
}

/** The values of a JSON data value set. */
export function valuesOfJson(body: unknown): DataValue[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badSet('A data value set is a JSON object with a dataValues list')
  const set = body as Record<string, unknown>
  if (!Array.isArray(set.dataValues)) throw badSet('dataValues: a list of data values is required')
  return set.dataValues.map((item, index) => {
    if (!item || typeof item !== 'object') throw badSet(`dataValues[${index}]: an object is required`)
    const value = item as Record<string, unknown>
    const field = (name: string) => text(value[name], `dataValues[${index}].${name}`)
    return required(index, {
      dataElement: field('dataElement'),
      period: field('period') ?? text(set.period, 'period'),
      orgUnit: field('orgUnit') ?? text(set.orgUnit, 'orgUnit'),
      categoryOptionCombo: field('categoryOptionCombo'),
      attributeOptionCombo: field('attributeOptionCombo') ?? text(set.attributeOptionCombo, 'attributeOptionCombo'),
      value: field('value') ?? '',
      comment: text(value.comment, `dataValues[${index}].comment`, MAX_COMMENT),
    })
  })
}

/** DHIS2's CSV columns, in their order when the file has no header line. */
const CSV_COLUMNS = ['dataelement', 'period', 'orgunit', 'categoryoptioncombo', 'attributeoptioncombo', 'value', 'storedby', 'lastupdated', 'comment']
/** Other names DHIS2 writes for the same columns. */
const CSV_ALIASES: Record<string, string> = {
  catoptcombo: 'categoryoptioncombo',
  attroptcombo: 'attributeoptioncombo',
  cmt: 'comment',
  strby: 'storedby',
  lstupd: 'lastupdated',
}

/** The values of a CSV data value set. */
export function valuesOfCsv(body: string): DataValue[] {
  let lines: string[][]
  try {
    lines = parse(body, { skip_empty_lines: true, relax_column_count: true, trim: true, bom: true })
  } catch (error) {
    throw badSet(`The CSV cannot be read: ${(error as Error).message}`)
  }
  const first = lines[0]?.map((cell) => cell.toLowerCase().replace(/[^a-z]/g, ''))
  const headed = first?.includes('dataelement')
  const columns = headed ? first.map((name) => CSV_ALIASES[name] ?? name) : CSV_COLUMNS
  const at = (line: string[], name: string, index: number) => {
    const i = columns.indexOf(name)
    return i < 0 ? undefined : text(line[i], `line ${index + (headed ? 2 : 1)}, ${name}`, name === 'comment' ? MAX_COMMENT : MAX_FIELD) || undefined
  }
  return lines.slice(headed ? 1 : 0).map((line, index) =>
    required(index, {
      dataElement: at(line, 'dataelement', index),
      period: at(line, 'period', index),
      orgUnit: at(line, 'orgunit', index),
      categoryOptionCombo: at(line, 'categoryoptioncombo', index),
      attributeOptionCombo: at(line, 'attributeoptioncombo', index),
      value: at(line, 'value', index) ?? '',
      comment: at(line, 'comment', index),
    }),
  )
}

/** A value with its three identifiers, or a 400 naming the one it lacks. */
function required(index: number, value: Omit<DataValue, 'index' | 'dataElement' | 'period' | 'orgUnit'> & Partial<DataValue>): DataValue {
  for (const name of ['dataElement', 'period', 'orgUnit'] as const) {
    if (!value[name]) throw badSet(`dataValues[${index}]: ${name} is required (on the value, or on the set for period and orgUnit)`)
  }
  return { ...value, index } as DataValue
}
