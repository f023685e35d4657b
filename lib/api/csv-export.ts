// CSV export (ingestion §10): RFC 4180, CRLF, UTF-8 without BOM, null → empty, JSON values as
// compact JSON text. Long exports can reach 100,000 rows, so they are streamed page by page: the
// response never holds more than one page in memory.
import { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { stringify } from 'csv-stringify'
import { sql } from 'kysely'
import type { Row, WideExport } from './resource.js'
import { MAX_LIMIT } from './query.js'

/** Rows fetched per query while streaming an export. */
export const EXPORT_PAGE = 10_000

export type Cell = unknown
export type PageReader = (offset: number, limit: number) => Promise<Cell[][]>

/** Text a spreadsheet would read as a formula (OWASP, "CSV injection"): `=`, `+`, `-`, `@`, tab, CR first. */
const FORMULA_START = /^[=+\-@\t\r]/
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/**
 * Every text cell of every export is neutralised: one a spreadsheet would run as a formula gets a
 * leading `'` (and is quoted), so opening an export never runs what a file, a form or a script put
 * into the database. A number written as text (`-5`) stays as it is.
 */
export function neutralise(value: unknown): unknown {
  return typeof value === 'string' && FORMULA_START.test(value) && !NUMBER.test(value) ? `'${value}` : value
}

function toCell(value: unknown): unknown {
  return neutralise(value !== null && typeof value === 'object' ? JSON.stringify(value) : value)
}

/**
 * Reads `count` rows from `offset` in pages of EXPORT_PAGE, starting with the page already read.
 * Stops early when a page comes back short (the data ended).
 */
async function* pages(first: Cell[][], read: PageReader, offset: number, count: number): AsyncGenerator<Cell[]> {
  let page = first
  let done = 0
  for (;;) {
    for (const row of page) yield row.map(toCell)
    done += page.length
    const want = Math.min(EXPORT_PAGE, count - done)
    if (page.length < EXPORT_PAGE || want <= 0) return
    page = await read(offset + done, want)
  }
}

/**
 * Sends a CSV export: `first` is the first page (already read, so errors are still JSON answers),
 * the rest is read on demand as the client consumes the stream.
 */
export function sendCsv(
  reply: FastifyReply,
  name: string,
  header: string[],
  total: number,
  first: Cell[][],
  read: PageReader = async () => [],
  range: { offset: number; count: number } = { offset: 0, count: first.length },
) {
  const csv = stringify({
    header: true,
    columns: header.map((name) => ({ key: name, header: neutralise(name) as string })),
    record_delimiter: 'windows',
    // csv-stringify quotes the delimiter, quotes and CRLF, but not a lone CR or LF: unquoted, that would
    // start a new row whose first cell escaped the formula rule.
    quoted_match: [/^'[=+\-@\t\r]/, /[\r\n]/],
    cast: { boolean: (b) => String(b) },
  })
  const rows = Readable.from(pages(first, read, range.offset, range.count))
  rows.on('error', (error) => csv.destroy(error))
  rows.pipe(csv)
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}.csv"`)
    .header('x-total-count', String(total))
    .send(csv)
}

/** §10.2: a wide export, read from its pivot query page by page (limit/offset of the request ignored). */
export async function sendWideCsv(reply: FastifyReply, name: string, { header, query }: WideExport) {
  const read = async (offset: number, limit: number) =>
    (await query.select(sql<number>`count(*) over ()`.as('__total')).limit(limit).offset(offset).execute()) as Row[]
  // The pivot's columns come in header order; __total rides along last.
  const cells = (rows: Row[]) => rows.map((row) => Object.values(row).slice(0, header.length))
  const first = await read(0, EXPORT_PAGE)
  const total = first.length ? Number(first[0].__total) : 0
  return sendCsv(reply, name, header, total, cells(first), async (offset, limit) => cells(await read(offset, limit)), { offset: 0, count: MAX_LIMIT })
}
