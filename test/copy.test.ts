// COPY through a Kysely executor (lib/data/copy.ts), on the engine under test: rows arrive in order and
// exactly as written, pieces may split a row anywhere, and a refused COPY fails its statement only.
import t, { type Test } from 'tap'
import { sql, type Kysely } from 'kysely'
import { emptyDatabase } from './helper.js'
import { copyField, copyInto, CopyRows } from '../lib/data/copy.js'

type Probe = { copy_probe: { id: number; label: string | null; amount: number | null; day: string | null } }

async function probeDatabase(t: Test) {
  const database = await emptyDatabase()
  t.teardown(() => database.close())
  const db = database.db as unknown as Kysely<Probe>
  await sql`create table copy_probe (id serial primary key, label text, amount float8, day date)`.execute(db)
  return db
}

const rows = [
  { label: 'plain', amount: 1.5, day: '2016-01-02' },
  { label: 'tab\there, line\nbreak, carriage\rreturn', amount: -2.5e15, day: null },
  { label: '\\N', amount: 1e-300, day: '2020-02-29' },
  { label: null, amount: null, day: null },
  { label: 'back\\slash "quoted" {braced}', amount: 0.1, day: '1999-12-31' },
]
const line = (r: (typeof rows)[number]) => `${[r.label, r.amount, r.day].map(copyField).join('\t')}\n`

t.test('copied rows arrive in order and as written, in pieces that split rows anywhere', async (t) => {
  const db = await probeDatabase(t)
  const text = rows.map(line).join('')
  const pieces = [text.slice(0, 7), text.slice(7, 40), text.slice(40)]
  const copied = await db.transaction().execute((trx) => copyInto<Probe>(trx, 'copy_probe', ['label', 'amount', 'day'], new CopyRows(pieces)))
  t.equal(copied, rows.length, 'the count of rows written')
  const stored = await db.selectFrom('copy_probe').select(['label', 'amount', 'day']).orderBy('id').execute()
  t.same(stored, rows)
})

t.test('a refused COPY fails with the server error and writes nothing; the database goes on', async (t) => {
  const db = await probeDatabase(t)
  const bad = new CopyRows([line(rows[0]), 'label\tnot a number\t\\N\n'])
  const failure = await db
    .transaction()
    .execute((trx) => copyInto<Probe>(trx, 'copy_probe', ['label', 'amount', 'day'], bad))
    .then(
      () => undefined,
      (error: { code?: string; message?: string }) => error,
    )
  t.equal(failure?.code, '22P02', String(failure?.message))
  t.match(failure?.message, /invalid input syntax for type double precision: "not a number"/)
  t.same(await db.selectFrom('copy_probe').selectAll().execute(), [], 'the rows before the bad one are not kept')
  await copyInto(db, 'copy_probe', ['label'], new CopyRows(['after\n']))
  t.same(await db.selectFrom('copy_probe').select('label').execute(), [{ label: 'after' }], 'the next statement runs')
})

t.test('a large COPY in many pieces arrives whole (the stream waits for the connection to drain)', async (t) => {
  const db = await probeDatabase(t)
  const pieces = Array.from({ length: 500 }, (_, p) => Array.from({ length: 200 }, (_, k) => `r${p * 200 + k}\t${p * 200 + k}\t\\N\n`).join(''))
  t.equal(await copyInto(db, 'copy_probe', ['label', 'amount', 'day'], new CopyRows(pieces)), 100_000)
  const { rows } = await sql<{ n: number; total: number; ordered: boolean }>`select count(*)::int as n, sum(amount)::float8 as total,
    bool_and(label = 'r' || amount::int) and bool_and(id = amount::int + 1) as ordered from copy_probe`.execute(db)
  t.same(rows[0], { n: 100_000, total: (99_999 * 100_000) / 2, ordered: true })
})
