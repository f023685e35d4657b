// ADX (IHE's Aggregate Data Exchange, `application/adx+xml`), the XML data value sets DHIS2 reads and
// writes: `<adx><group orgUnit period dataSet><dataValue dataElement value/></group></adx>`, where a
// group's orgUnit and period apply to its values and a period is ISO 8601's first day and duration
// (2026-10-01/P1M). A disaggregation is written as attributes of its own (SEX="F"): this API reads
// none (a disaggregation is an indicator of its own), so such a value is set aside, named.
import { XMLBuilder } from 'fast-xml-parser'
import { SaxesParser, type SaxesTagPlain } from 'saxes'
import { ApiError } from '../core/errors.js'
import { type DataValue, text } from './data-values.js'
import type { DataValueOut } from './export.js'

/** ADX's namespace, on the root element of every message. */
const ADX_NAMESPACE = 'urn:ihe:qrph:adx:2015'

/** A data value's attributes that are not a disaggregation. */
const VALUE_ATTRIBUTES = new Set(['dataElement', 'value', 'categoryOptionCombo', 'attributeOptionCombo', 'comment', 'storedBy', 'annotation'])
/** A group's attributes that are not a disaggregation (of every value in it): ADX's and DHIS2's own. */
const GROUP_ATTRIBUTES = new Set(['orgUnit', 'period', 'dataSet', 'completeDate', 'attributeOptionCombo', 'schemaLocation'])

/** How deep elements may nest (an ADX message is four deep: adx, group, dataValue, annotation). */
const MAX_DEPTH = 100

const badMessage = (message: string) => new ApiError(400, 'BAD_DATA_VALUE_SET', message)

type Attributes = Record<string, string>

/** A name without its namespace prefix (`adx:group` is a group). */
const localName = (name: string) => name.slice(name.indexOf(':') + 1)

/** An element's attributes by their local names, its namespace declarations left out. */
function attributesOf(tag: SaxesTagPlain): Attributes {
  const found: Attributes = {}
  for (const [name, value] of Object.entries(tag.attributes)) if (name !== 'xmlns' && !name.startsWith('xmlns:')) found[localName(name)] = value
  return found
}

/** An attribute's text, or undefined; a NUL or a value past its length is a 400 naming where. */
const attribute = (element: Attributes, name: string, where: string) => {
  const value = element[name]
  return value === undefined ? undefined : text(value, `ADX: ${where}, ${name}`) || undefined
}

/** The disaggregation written as attributes of their own (`SEX=F AGE=0-4`), or undefined. */
function categoriesOf(element: Attributes, known: Set<string>, where: string): string | undefined {
  const names = Object.keys(element).filter((name) => !known.has(name))
  return names.length ? names.map((name) => `${name}=${attribute(element, name, where) ?? ''}`).join(' ') : undefined
}

/** A group's place and period, which apply to its values, and its own disaggregation. */
interface Group {
  where: string
  orgUnit: string
  period: string
  attributes: Attributes
  categories?: string
}

function groupOf(attributes: Attributes, number: number): Group {
  const where = `group ${number}`
  const orgUnit = attribute(attributes, 'orgUnit', where)
  const period = attribute(attributes, 'period', where)
  if (!orgUnit || !period) throw badMessage(`ADX: group ${number} needs its orgUnit and period attributes`)
  return { where, orgUnit, period, attributes, categories: categoriesOf(attributes, GROUP_ATTRIBUTES, where) }
}

function dataValueOf(element: Attributes, group: Group, index: number, groups: number): DataValue {
  const at = `value ${index + 1} (group ${groups})`
  const dataElement = attribute(element, 'dataElement', at)
  const value = attribute(element, 'value', at)
  if (!dataElement || value === undefined) throw badMessage(`ADX: ${at} needs its dataElement and value attributes`)
  const categories = [group.categories, categoriesOf(element, VALUE_ATTRIBUTES, at)].filter(Boolean).join(' ')
  return {
    index,
    dataElement,
    period: group.period,
    orgUnit: group.orgUnit,
    value,
    categoryOptionCombo: attribute(element, 'categoryOptionCombo', at),
    attributeOptionCombo: attribute(element, 'attributeOptionCombo', at) ?? attribute(group.attributes, 'attributeOptionCombo', group.where),
    comment: attribute(element, 'comment', at),
    disaggregation: categories || undefined,
  }
}

/**
 * The values of an ADX message, each with its group's orgUnit and period; a 400 naming what is missing
 * or malformed. Read in one pass by saxes, a strict (well-formedness checking) streaming parser: XML's
 * five entities and character references are read, a DTD is refused before parsing (no entity it
 * declares is ever expanded), and elements past 100 deep are refused.
 */
export function valuesOfAdx(body: string): DataValue[] {
  if (/<!DOCTYPE/i.test(body)) throw badMessage('ADX: a document type declaration (<!DOCTYPE) is not read; send the message without it')
  const parser = new SaxesParser()
  const values: DataValue[] = []
  const path: string[] = []
  let group: Group | undefined
  let groups = 0
  parser.on('opentag', (tag) => {
    path.push(localName(tag.name))
    if (path.length > MAX_DEPTH) throw badMessage(`ADX: elements nested past ${MAX_DEPTH} deep at line ${parser.line}`)
    if (path.length === 1 && path[0] !== 'adx') throw badMessage('ADX: the root element is <adx> (xmlns="urn:ihe:qrph:adx:2015")')
    if (path.length === 2 && path[1] === 'group') group = groupOf(attributesOf(tag), ++groups)
    if (path.length === 3 && path[1] === 'group' && path[2] === 'dataValue') values.push(dataValueOf(attributesOf(tag), group!, values.length, groups))
  })
  parser.on('closetag', () => path.pop())
  parser.on('error', (error) => {
    // saxes names its place first ("1:84: unclosed tag"): said here in words.
    const reason = error.message.replace(/^\d+:\d+: /, '')
    throw badMessage(`ADX: not well-formed XML at line ${parser.line}, column ${parser.column}: ${reason}`)
  })
  parser.write(body).close()
  return values
}

/** A DHIS2 period (202610, 20261015) in ADX's form: its first day and its length. */
function adxPeriod(period: string): string {
  const day = `${period.slice(0, 4)}-${period.slice(4, 6)}-${period.slice(6, 8) || '01'}`
  return `${day}/${period.length === 8 ? 'P1D' : 'P1M'}`
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', format: true, suppressEmptyNode: true })

/**
 * An ADX message written in parts, as its values are read: its opening, then its groups page by page
 * (one group per organisation unit and period, in the order given: a page holds whole places, so no
 * group spans two), then its end. `dataSetOf` names each period's data set (ADX requires one; a
 * campaign stands for it here).
 */
export function adxWriter(dataSetOf: (period: string) => string, exported = new Date()) {
  const exportedAt = exported.toISOString().replace(/\.\d+Z$/, 'Z')
  return {
    head: `<?xml version="1.0" encoding="UTF-8"?>\n<adx xmlns="${ADX_NAMESPACE}" exported="${exportedAt}">\n`,
    groups(values: DataValueOut[]): string {
      const groups = new Map<string, { orgUnit: string; period: string; values: DataValueOut[] }>()
      for (const value of values) {
        const key = JSON.stringify([value.orgUnit, value.period])
        const group = groups.get(key) ?? { orgUnit: value.orgUnit, period: value.period, values: [] }
        group.values.push(value)
        groups.set(key, group)
      }
      return builder.build({
        group: [...groups.values()].map((g) => ({
          '@orgUnit': g.orgUnit,
          '@period': adxPeriod(g.period),
          '@dataSet': dataSetOf(g.period),
          dataValue: g.values.map((v) => ({ '@dataElement': v.dataElement, '@value': v.value })),
        })),
      })
    },
    tail: '</adx>\n',
  }
}
