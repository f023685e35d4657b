// COPY … FROM STDIN through a Kysely executor, on either engine: rows travel as PostgreSQL's text
// format instead of statement parameters or array literals, and the server writes them without
// planning an INSERT. Kysely has no COPY, so the rows ride as the single parameter of a raw query and
// each engine's client hands them over its own way: node-postgres through pg-copy-streams, PGlite as
// the `/dev/blob` of its query options. Rows keep their order (a serial id follows it).
import { once } from 'node:events'
import type { PGlite } from '@electric-sql/pglite'
import { CompiledQuery, type Kysely } from 'kysely'
import type pg from 'pg'
import copyStreams from 'pg-copy-streams'

/** The text of rows to copy, in pieces sent one after another. */
export class CopyRows {
  constructor(readonly pieces: string[]) {}
}

/** A field in COPY's text format: `\N` for null; a string with its backslashes, tabs and line breaks escaped. */
export function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N'
  if (typeof value === 'number') return String(value)
  return String(value).replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
}

/** A row in COPY's text format, its line break included. */
export const copyLine = (values: unknown[]) => `${values.map(copyField).join('\t')}\n`

/**
 * Rows a COPY statement when `rows` are copied in several, each followed by a progress report: about a
 * tenth of them (at least 1,000, at most `most`), so the progress moves in tenths whatever the size.
 */
export const rowsPerCopy = (rows: number, most: number) => Math.min(most, Math.max(1_000, Math.ceil(rows / 10)))

/** Copies `rows` into `table`'s `columns` in `db`'s session (its transaction, if any); returns how many rows were written. */
export async function copyInto<Tables>(db: Kysely<Tables>, table: NoInfer<keyof Tables> & string, columns: readonly string[], rows: CopyRows): Promise<number> {
  const names = columns.map((c) => `"${c}"`).join(', ')
  const result = await db.executeQuery<{ copied: number }>(CompiledQuery.raw(`copy "${table}" (${names}) from stdin`, [rows]))
  return result.rows[0]?.copied ?? 0
}

/** The raw query carries rows to copy: `values` is `[CopyRows]`. */
export const carriesCopy = (values: unknown[] | undefined): values is [CopyRows] => values?.length === 1 && values[0] instanceof CopyRows

/** node-postgres: the COPY on `client`, its rows streamed as they are taken. */
export async function copyWithPg(client: pg.ClientBase, statement: string, rows: CopyRows) {
  const stream = client.query(copyStreams.from(statement))
  const finished = once(stream, 'finish')
  // A failure while a piece is being written is thrown where `finished` is awaited.
  finished.catch(() => {})
  try {
    for (const piece of rows.pieces) if (!stream.write(piece)) await once(stream, 'drain')
  } finally {
    stream.end()
  }
  await finished
  return { command: 'COPY', rowCount: stream.rowCount, rows: [{ copied: stream.rowCount }] }
}

/** PGlite for Kysely's dialect: its queries, where one that carries rows reads them from `/dev/blob`. */
export function copyingPGlite(pglite: PGlite): PGlite {
  return new Proxy(pglite, {
    get(target, property) {
      if (property === 'query')
        return async (statement: string, values?: unknown[]) => {
          if (!carriesCopy(values)) return target.query(statement, values)
          const result = await target.query(statement.replace(/ from stdin$/, ` from '/dev/blob'`), [], { blob: new Blob(values[0].pieces) })
          return { ...result, rows: [{ copied: result.affectedRows ?? 0 }] }
        }
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
