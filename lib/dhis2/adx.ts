// ADX (IHE's Aggregate Data Exchange, `application/adx+xml`), the XML data value sets DHIS2 reads and
// writes: `<adx><group orgUnit period dataSet><dataValue dataElement value/></group></adx>`, where a
// group's orgUnit and period apply to its values and a period is ISO 8601's first day and duration
// (2026-10-01/P1M). A disaggregation is written as attributes of its own (SEX="F"): this API reads
// none (a disaggregation is an indicator of its own), so such a value is set aside, named.
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser'
import { ApiError } from '../core/errors.js'
import { type DataValue, text } from './data-values.js'
import type { DataValueOut } from './export.js'

/** ADX's namespace, on the root element of every message. */
const ADX_NAMESPACE = 'urn:ihe:qrph:adx:2015'

/** A data value's attributes that are not a disaggregation. */
const VALUE_ATTRIBUTES = new Set(['dataElement', 'value', 'categoryOptionCombo', 'attributeOptionCombo', 'comment', 'storedBy', 'annotation'])
/** A group's attributes that are not a disaggregation (of every value in it): ADX's and DHIS2's own. */
const GROUP_ATTRIBUTES = new Set(['orgUnit', 'period', 'dataSet', 'completeDate', 'attributeOptionCombo', 'dataValue', 'schemaLocation', 'xmlns'])

const badMessage = (message: string) => new ApiError(400, 'BAD_DATA_VALUE_SET', message)

type Element = Record<string, unknown>

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  // Attributes stay text: a code "007" is not the number 7.
  parseAttributeValue: false,
  parseTagValue: false,
  // XML's five predefined entities and character references (&#38;) are read, a name "Mother &amp;
  // Child" as written; a DTD, whose entities could multiply a body, is refused before parsing.
  processEntities: true,
  htmlEntities: true,
  isArray: (name) => name === 'group' || name === 'dataValue',
})

/** An attribute's text, or undefined; a NUL or a value past its length is a 400 naming where. */
const attribute = (element: Element, name: string, where: string) => {
  const value = element[name]
  return typeof value === 'string' ? text(value, `ADX: ${where}, ${name}`) || undefined : undefined
}

/** The disaggregation written as attributes of their own (`SEX=F AGE=0-4`), or undefined. */
function categoriesOf(element: Element, known: Set<string>, where: string): string | undefined {
  const names = Object.keys(element).filter((name) => !known.has(name) && typeof element[name] === 'string')
  return names.length ? names.map((name) => `${name}=${attribute(element, name, where) ?? ''}`).join(' ') : undefined
}

/** The values of an ADX message, each with its group's orgUnit and period; a 400 naming what is missing or malformed. */
export function valuesOfAdx(body: string): DataValue[] {
  if (/<!DOCTYPE/i.test(body)) throw badMessage('ADX: a document type declaration (<!DOCTYPE) is not read; send the message without it')
  const valid = XMLValidator.validate(body)
  if (valid !== true) throw badMessage(`ADX: not well-formed XML at line ${valid.err.line}, column ${valid.err.col}: ${valid.err.msg}`)
  let parsed: Element
  try {
    parsed = parser.parse(body)
  } catch (error) {
    // The validator passes what the parser's own limits then refuse (elements nested past 100 deep).
    throw badMessage(`ADX: ${(error as Error).message}`)
  }
  const root = parsed.adx as Element | undefined
  if (!root || typeof root !== 'object') throw badMessage('ADX: the root element is <adx> (xmlns="urn:ihe:qrph:adx:2015")')
  const values: DataValue[] = []
  for (const [g, group] of ((root.group as Element[] | undefined) ?? []).entries()) {
    const where = `group ${g + 1}`
    const orgUnit = attribute(group, 'orgUnit', where)
    const period = attribute(group, 'period', where)
    if (!orgUnit || !period) throw badMessage(`ADX: group ${g + 1} needs its orgUnit and period attributes`)
    const groupCategories = categoriesOf(group, GROUP_ATTRIBUTES, where)
    for (const element of (group.dataValue as Element[] | undefined) ?? []) {
      const at = `value ${values.length + 1} (group ${g + 1})`
      const dataElement = attribute(element, 'dataElement', at)
      const value = attribute(element, 'value', at)
      if (!dataElement || value === undefined) throw badMessage(`ADX: ${at} needs its dataElement and value attributes`)
      const categories = [groupCategories, categoriesOf(element, VALUE_ATTRIBUTES, at)].filter(Boolean).join(' ')
      values.push({
        index: values.length,
        dataElement,
        period,
        orgUnit,
        value,
        categoryOptionCombo: attribute(element, 'categoryOptionCombo', at),
        attributeOptionCombo: attribute(element, 'attributeOptionCombo', at) ?? attribute(group, 'attributeOptionCombo', where),
        comment: attribute(element, 'comment', at),
        disaggregation: categories || undefined,
      })
    }
  }
  return values
}

/** A DHIS2 period (202610, 20261015) in ADX's form: its first day and its length. */
function adxPeriod(period: string): string {
  const day = `${period.slice(0, 4)}-${period.slice(4, 6)}-${period.slice(6, 8) || '01'}`
  return `${day}/${period.length === 8 ? 'P1D' : 'P1M'}`
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', format: true, suppressEmptyNode: true })

/**
 * `values` as an ADX message: one group per organisation unit and period, in the order given.
 * `dataSetOf` names each period's data set (ADX requires one; a campaign stands for it here).
 */
export function adxOf(values: DataValueOut[], dataSetOf: (period: string) => string, exported = new Date()): string {
  const groups = new Map<string, { orgUnit: string; period: string; values: DataValueOut[] }>()
  for (const value of values) {
    const key = JSON.stringify([value.orgUnit, value.period])
    const group = groups.get(key) ?? { orgUnit: value.orgUnit, period: value.period, values: [] }
    group.values.push(value)
    groups.set(key, group)
  }
  const message = {
    '?xml': { '@version': '1.0', '@encoding': 'UTF-8' },
    adx: {
      '@xmlns': ADX_NAMESPACE,
      '@exported': exported.toISOString().replace(/\.\d+Z$/, 'Z'),
      group: [...groups.values()].map((g) => ({
        '@orgUnit': g.orgUnit,
        '@period': adxPeriod(g.period),
        '@dataSet': dataSetOf(g.period),
        dataValue: g.values.map((v) => ({ '@dataElement': v.dataElement, '@value': v.value })),
      })),
    },
  }
  return builder.build(message)
}
