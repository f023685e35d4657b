// ADX (IHE's Aggregate Data Exchange, `application/adx+xml`), the XML data value sets DHIS2 reads and
// writes: `<adx><group orgUnit period dataSet><dataValue dataElement value/></group></adx>`, where a
// group's orgUnit and period apply to its values and a period is ISO 8601's first day and duration
// (2026-10-01/P1M). A disaggregation is written as attributes of its own (SEX="F"): this API reads
// none (a disaggregation is an indicator of its own), so such a value is set aside, named.
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser'
import { ApiError } from '../core/errors.js'
import type { DataValue } from './data-values.js'
import type { DataValueOut } from './export.js'

/** ADX's namespace, on the root element of every message. */
const ADX_NAMESPACE = 'urn:ihe:qrph:adx:2015'

/** A data value's attributes that are not a disaggregation. */
const VALUE_ATTRIBUTES = new Set(['dataElement', 'value', 'categoryOptionCombo', 'attributeOptionCombo', 'comment', 'storedBy', 'annotation'])

const badMessage = (message: string) => new ApiError(400, 'BAD_DATA_VALUE_SET', message)

type Element = Record<string, unknown>

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  // Attributes stay text: a code "007" is not the number 7.
  parseAttributeValue: false,
  parseTagValue: false,
  // Neither a DTD's entities nor the predefined ones are expanded: no value needs them, and a DTD's could multiply a body.
  processEntities: false,
  isArray: (name) => name === 'group' || name === 'dataValue',
})

/** An attribute's text, or undefined. */
const attribute = (element: Element, name: string) => {
  const value = element[name]
  return typeof value === 'string' && value.trim() ? value.trim() : undefined
}

/** The values of an ADX message, each with its group's orgUnit and period; a 400 naming what is missing or malformed. */
export function valuesOfAdx(body: string): DataValue[] {
  if (/<!DOCTYPE/i.test(body)) throw badMessage('ADX: a document type declaration (<!DOCTYPE) is not read; send the message without it')
  const valid = XMLValidator.validate(body)
  if (valid !== true) throw badMessage(`ADX: not well-formed XML at line ${valid.err.line}, column ${valid.err.col}: ${valid.err.msg}`)
  const root = parser.parse(body).adx as Element | undefined
  if (!root || typeof root !== 'object') throw badMessage('ADX: the root element is <adx> (xmlns="urn:ihe:qrph:adx:2015")')
  const values: DataValue[] = []
  for (const [g, group] of ((root.group as Element[] | undefined) ?? []).entries()) {
    const orgUnit = attribute(group, 'orgUnit')
    const period = attribute(group, 'period')
    if (!orgUnit || !period) throw badMessage(`ADX: group ${g + 1} needs its orgUnit and period attributes`)
    for (const element of (group.dataValue as Element[] | undefined) ?? []) {
      const dataElement = attribute(element, 'dataElement')
      const value = attribute(element, 'value')
      if (!dataElement || value === undefined) throw badMessage(`ADX: value ${values.length + 1} (group ${g + 1}) needs its dataElement and value attributes`)
      const categories = Object.keys(element).filter((name) => !VALUE_ATTRIBUTES.has(name))
      values.push({
        index: values.length,
        dataElement,
        period,
        orgUnit,
        value,
        categoryOptionCombo: attribute(element, 'categoryOptionCombo'),
        attributeOptionCombo: attribute(element, 'attributeOptionCombo') ?? attribute(group, 'attributeOptionCombo'),
        comment: attribute(element, 'comment'),
        disaggregation: categories.length ? categories.map((name) => `${name}=${attribute(element, name) ?? ''}`).join(' ') : undefined,
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
