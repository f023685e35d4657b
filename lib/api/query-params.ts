// The raw query string as an ordered list of (name, value) pairs: repeated parameters matter
// (`id__in=1,2&id__in=3`), and `get_params`/`next` keep the client's spelling.
import { badRequest } from '../core/errors.js'

/**
 * URLSearchParams turns escapes that are not UTF-8 (`%ff`) into U+FFFD, which would then be matched
 * or stored silently; such a query string or form body is refused instead.
 */
export function assertPercentEncodedUtf8(raw: string, what: string): void {
  if (!raw.includes('%')) return
  for (const part of raw.split(/[&=]/)) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '))
    } catch {
      throw badRequest('INVALID_ENCODING', `${what} is not valid percent-encoded UTF-8 near "${part.slice(0, 40)}"`)
    }
  }
}

/**
 * PostgreSQL's text holds no NUL character (`invalid byte sequence for encoding "UTF8": 0x00`, a 500 if
 * it reached a statement): every parameter is checked here, where the query string is read, once.
 */
function assertStorableText(name: string, value: string): void {
  if (name.includes('\u0000')) throw badRequest('INVALID_CHARACTER', 'A query parameter name contains a NUL character (%00)')
  if (value.includes('\u0000')) {
    throw badRequest('INVALID_CHARACTER', `Parameter ${name} contains a NUL character (%00), which no value can hold`, { parameter: name })
  }
}

export class QueryParams {
  constructor(readonly entries: ReadonlyArray<readonly [string, string]>) {}

  /** The parameters of a read made inside the process: each value as a URL writes it, a list comma-separated, an absent one left out. */
  static of(values: Record<string, string | number | boolean | null | undefined | ReadonlyArray<string | number>>): QueryParams {
    const entries: Array<readonly [string, string]> = []
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined || value === null) continue
      entries.push([name, Array.isArray(value) ? value.join(',') : String(value)])
    }
    return new QueryParams(entries)
  }

  static fromUrl(url: string): QueryParams {
    const q = url.indexOf('?')
    if (q < 0) return new QueryParams([])
    const raw = url.slice(q + 1)
    assertPercentEncodedUtf8(raw, 'Query string')
    const entries = [...new URLSearchParams(raw)]
    for (const [name, value] of entries) assertStorableText(name, value)
    return new QueryParams(entries)
  }

  // Plain loops below: these run several times per request, and the array-method chains they replace
  // were a measurable part of a short read (bench/README.md, "Datapoint reads").
  names(): string[] {
    const names = new Set<string>()
    for (const [name] of this.entries) names.add(name)
    return [...names]
  }

  has(name: string): boolean {
    for (const [n] of this.entries) if (n === name) return true
    return false
  }

  /**
   * The value of a single-valued parameter. Repeating it with the same value is harmless; with
   * different values the request is ambiguous and refused (400 DUPLICATE_PARAMETER).
   */
  last(name: string): string | undefined {
    const values = this.all(name)
    if (values.some((v) => v !== values[0])) {
      throw badRequest('DUPLICATE_PARAMETER', `Parameter ${name} is given more than once with different values`)
    }
    return values[0]
  }

  all(name: string): string[] {
    const values: string[] = []
    for (const [n, v] of this.entries) if (n === name) values.push(v)
    return values
  }

  /** Comma lists, repeated parameters concatenated; empty items dropped. */
  list(name: string): string[] {
    const items: string[] = []
    for (const [n, v] of this.entries) {
      if (n !== name) continue
      for (const item of v.split(',')) {
        const trimmed = item.trim()
        if (trimmed !== '') items.push(trimmed)
      }
    }
    return items
  }

  /** Each parameter's last raw value (meta.get_params). */
  lastValues(): Record<string, string> {
    return Object.fromEntries(this.entries)
  }

  without(...names: string[]): QueryParams {
    return new QueryParams(this.entries.filter(([n]) => !names.includes(n)))
  }

  toString(): string {
    return new URLSearchParams(this.entries as [string, string][]).toString()
  }
}
