// JSON that is already text (built by PostgreSQL) and goes into a response as it is: a large page
// costs nothing to parse into objects and serialise again (bench/README.md, datapoint reads).
import { randomUUID } from 'node:crypto'

export class RawJson {
  constructor(readonly text: string) {}
}

/** Whether `value`, or one of its own top-level values, is RawJson (where lists put it). */
export function holdsRawJson(value: object): boolean {
  return value instanceof RawJson || Object.values(value).some((v) => v instanceof RawJson)
}

/**
 * JSON.stringify, with each RawJson written as its text. Each one is first written as a string
 * holding a per-call random token, then that quoted string is swapped for the text: no value a
 * client sends can spell the token.
 */
export function stringifyWithRaw(value: unknown): string {
  const texts: string[] = []
  const token = `raw-json:${randomUUID()}:`
  const json = JSON.stringify(value, (_key, v: unknown) => (v instanceof RawJson ? token + (texts.push(v.text) - 1) : v))
  if (!texts.length) return json
  return json.replace(new RegExp(`"${token}(\\d+)"`, 'g'), (_match, index: string) => texts[Number(index)])
}
