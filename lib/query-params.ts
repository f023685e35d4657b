// The raw query string as an ordered list of (name, value) pairs: repeated parameters matter
// (`id__in=1,2&id__in=3`), and `get_params`/`next` keep the client's spelling.
export class QueryParams {
  constructor(readonly entries: ReadonlyArray<readonly [string, string]>) {}

  static fromUrl(url: string): QueryParams {
    const q = url.indexOf('?')
    if (q < 0) return new QueryParams([])
    return new QueryParams([...new URLSearchParams(url.slice(q + 1))])
  }

  names(): string[] {
    return [...new Set(this.entries.map(([name]) => name))]
  }

  has(name: string): boolean {
    return this.entries.some(([n]) => n === name)
  }

  /** The last value given for `name` (repeated parameters: the last wins). */
  last(name: string): string | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) if (this.entries[i][0] === name) return this.entries[i][1]
    return undefined
  }

  all(name: string): string[] {
    return this.entries.filter(([n]) => n === name).map(([, v]) => v)
  }

  /** Comma lists, repeated parameters concatenated; empty items dropped. */
  list(name: string): string[] {
    return this.all(name).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')
  }

  /** Each parameter's last raw value (meta.get_params). */
  lastValues(): Record<string, string> {
    return Object.fromEntries(this.names().map((n) => [n, this.last(n) as string]))
  }

  without(...names: string[]): QueryParams {
    return new QueryParams(this.entries.filter(([n]) => !names.includes(n)))
  }

  toString(): string {
    return new URLSearchParams(this.entries as [string, string][]).toString()
  }
}
