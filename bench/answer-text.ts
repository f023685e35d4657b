// `npm run bench:answer-text`: what writing a row's detail costs, by JSON.stringify and by the
// fast-json-stringify compiled from the resource's detail schema (lib/api/answer-text.ts), for every
// model resource, on a row of its columns' kinds; `BENCH_ROUNDS` rounds (default 3) of 100,000 rows
// each, alternated. It first checks that both write the same text.
import { detailText } from '../lib/api/answer-text.js'
import { detailSchema } from '../lib/api/openapi.js'
import type { Resource, Row } from '../lib/api/resource.js'
import { resources } from '../resources/index.js'

const SAMPLE = {
  integer: 12,
  related: 12,
  float: 1.5,
  boolean: true,
  json: { a: [1, 'b'] },
  datetime: '2016-03-01T00:00:00',
  date: '2016-03-01',
  string: 'Ébène, north',
}

/** A row as the detail read gives it: its detail fields, each column's of its kind, null for a field a join or hook adds. */
function rowOf(resource: Resource): Row {
  const fields = Object.keys(detailSchema(resource).properties)
  return Object.fromEntries(fields.map((name) => [name, name in resource.columns ? SAMPLE[resource.columns[name].kind] : null]))
}

const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const N = 100_000
const lines: string[] = []
for (const resource of resources.filter((r) => r.kind === 'model')) {
  const row = rowOf(resource)
  if (detailText(resource, row) !== JSON.stringify(row)) throw new Error(`${resource.name}: the two texts differ`)
  const timings = { stringify: [] as number[], schema: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    let start = performance.now()
    for (let i = 0; i < N; i++) JSON.stringify(row)
    timings.stringify.push(((performance.now() - start) * 1000) / N)
    start = performance.now()
    for (let i = 0; i < N; i++) detailText(resource, row)
    timings.schema.push(((performance.now() - start) * 1000) / N)
  }
  const best = (values: number[]) => Math.min(...values)
  lines.push(
    `| ${resource.name} | ${Object.keys(row).length} | ${best(timings.stringify).toFixed(2)} | ${best(timings.schema).toFixed(2)} | ${(best(timings.stringify) / best(timings.schema)).toFixed(2)} |`,
  )
}
console.log('| resource | fields | JSON.stringify µs | fast-json-stringify µs | × |')
console.log('|---|---|---|---|---|')
for (const line of lines) console.log(line)
