// An uploaded file read row by row from disk, in bounded memory (docs/decisions.md, "Uploads in bounded
// memory"): a CSV is decoded and parsed as a stream, so a file is never held whole, nor twice; what
// is kept of it is the caller's choice. An XLSX file (a zip archive, its cells spread over parts) is
// read whole, after the zip-bomb check, inside the worker thread's own heap.
import { isUtf8 } from 'node:buffer'
import { createReadStream, createWriteStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parse } from 'csv-parse'
import { type Cell, cleanCell, emptyFile, type FileKind, formulaCell, MAX_COLUMNS, normaliseHeader, readXlsx, tooManyColumns, unreadableFile } from './files.js'

/** What reading a file hands on: its header once, then each data row (0-based), cleaned and aligned. */
export interface RowSink {
  header(header: string[]): void
  row(cells: Cell[], index: number): void
}

const CHUNK = 1 << 20

/** Whether the whole file is UTF-8 (else it is read as Windows-1252), checked chunk by chunk. */
async function isUtf8File(path: string): Promise<boolean> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: CHUNK })) decoder.decode(chunk as Buffer, { stream: true })
    decoder.decode()
    return true
  } catch (error) {
    if (error instanceof TypeError) return false
    throw error
  }
}

/**
 * The first line (1-based) of the file at `path` that is not UTF-8, or undefined when all of it is.
 * Read a chunk at a time, up to its last line break (LF, CR or CRLF, as the CSV reader takes them: a
 * break byte is never inside a multi-byte character), the rest carried to the next; a chunk that is
 * UTF-8 whole only has its breaks counted, one that is not is checked a line at a time.
 */
export async function firstNonUtf8Line(path: string): Promise<number | undefined> {
  let line = 1
  let afterCr = false
  const scan = (bytes: Buffer): number | undefined => {
    const whole = isUtf8(bytes)
    let start = 0
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i]
      if (byte !== 10 && byte !== 13) {
        afterCr = false
        continue
      }
      if (!whole && !isUtf8(bytes.subarray(start, i))) return line
      if (byte === 13 || !afterCr) line++ // the LF of a CRLF ends no line of its own
      afterCr = byte === 13
      start = i + 1
    }
    return whole || isUtf8(bytes.subarray(start)) ? undefined : line
  }
  let carried = Buffer.alloc(0)
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK })) {
    const bytes = carried.length ? Buffer.concat([carried, chunk as Buffer]) : (chunk as Buffer)
    const cut = Math.max(bytes.lastIndexOf(10), bytes.lastIndexOf(13)) + 1
    const bad = scan(bytes.subarray(0, cut))
    if (bad !== undefined) return bad
    carried = Buffer.from(bytes.subarray(cut))
  }
  return scan(carried)
}

/** Writes the text of the file at `path`, read as `encoding` (a WHATWG label), to `target` as UTF-8. */
export async function transcodeToUtf8(path: string, target: string, encoding: string): Promise<void> {
  const decoder = new TextDecoder(encoding)
  const decode = new Transform({
    transform: (chunk: Buffer, _encoding, done) => done(null, Buffer.from(decoder.decode(chunk, { stream: true }))),
    flush: (done) => done(null, Buffer.from(decoder.decode())),
  })
  await pipeline(createReadStream(path, { highWaterMark: CHUNK }), decode, createWriteStream(target))
}

/** Header and rows from raw records: blank records skipped, the first kept one the header (§2.4). */
function tableSink(sink: RowSink, checkFormulas: boolean) {
  let header: string[] | undefined
  let rows = 0
  return {
    record(record: Cell[]) {
      if (record.length > MAX_COLUMNS) throw tooManyColumns(record.length)
      if (!record.some((c) => cleanCell(c) !== null)) return
      if (!header) {
        header = normaliseHeader(record)
        sink.header(header)
        return
      }
      const cells = header.map((_, i) => cleanCell(record[i]))
      if (checkFormulas)
        cells.forEach((cell, c) => {
          if (typeof cell === 'string' && cell.charCodeAt(0) === 61 /* = */) throw formulaCell(rows + 2, header![c], `"${cell.slice(0, 40)}" is a formula`)
        })
      sink.row(cells, rows++)
    },
    end() {
      if (!rows) throw emptyFile()
      return rows
    },
  }
}

async function readCsvRows(path: string, sink: RowSink): Promise<number> {
  const decoder = new TextDecoder((await isUtf8File(path)) ? 'utf-8' : 'windows-1252')
  const table = tableSink(sink, true)
  const decode = new Transform({
    readableObjectMode: true,
    transform: (chunk: Buffer, _encoding, done) => done(null, decoder.decode(chunk, { stream: true })),
    flush: (done) => done(null, decoder.decode()),
  })
  const parser = parse({ record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: true, skip_empty_lines: true })
  const consume = new Transform({
    objectMode: true,
    transform: (record: string[], _encoding, done) => {
      try {
        table.record(record)
        done()
      } catch (error) {
        done(error as Error)
      }
    },
  })
  try {
    await pipeline(createReadStream(path, { highWaterMark: CHUNK }), decode, parser, consume)
  } catch (error) {
    // The file's own mistakes (a formula, too many columns) as they are; the parser's as unreadable.
    if ((error as { statusCode?: number }).statusCode) throw error
    throw unreadableFile()
  }
  return table.end()
}

async function readXlsxRows(path: string, sink: RowSink, maxUncompressed?: number): Promise<number> {
  const workbook = await readXlsx(await readFile(path), maxUncompressed)
  const table = tableSink(sink, false)
  table.record(workbook.header)
  for (const row of workbook.rows) table.record(row)
  return table.end()
}

/** Reads the file at `path` into `sink`; returns its data rows. 422 for an empty or unreadable file. */
export function readRows(path: string, kind: FileKind, sink: RowSink, maxUncompressed?: number): Promise<number> {
  return kind === 'csv' ? readCsvRows(path, sink) : readXlsxRows(path, sink, maxUncompressed)
}
