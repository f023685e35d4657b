// `npm run bench:dhis2` (PostgreSQL): the same values imported as a DHIS2 data value set (JSON, CSV
// and ADX, `POST /api/dataValueSets`) and uploaded as the campaign CSV they stand for (`POST
// /api/v1/document/` then `transform_upload`), in alternated rounds, each on a campaign of its own so
// that every round writes new values. Seeded: the national tree of bench/national.ts, a set of
// BENCH_PLACES districts × 20 indicators (1,000 × 20 = 20,000 values by default: a JSON set of about
// 1.4 MB, within the import's 2 MB), BENCH_PAIRS rounds of each. Prints each round's seconds and values
// per second, and each format's median against the CSV upload's (target ≥ 0.8).
import http from 'node:http'
import { ADMIN_URL, doing, median } from './lib.js'
import { type apiClient, INDICATORS, KEY, LOCATIONS, onNationalServer } from './national.js'
import { prng } from '../lib/core/prng.js'

const PLACES = Number(process.env.BENCH_PLACES ?? 1_000)
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3)
const FORMATS = ['upload', 'json', 'csv', 'adx'] as const
type Format = (typeof FORMATS)[number]

/** One campaign's values: the first PLACES districts (G102…) × I1…I20, seeded. */
function valuesOf(campaign: number) {
  const random = prng(campaign)
  return Array.from({ length: PLACES }, (_, p) => ({
    orgUnit: `G${102 + p}`,
    values: Array.from({ length: INDICATORS }, () => String(Math.floor(random() * 1000))),
  }))
}

/** DHIS2's period of seedNation's campaign `c` (`C<c>`, starting on 2016-01-01 + 7c days): its first day. */
const periodOf = (c: number) => new Date(Date.UTC(2016, 0, 1 + 7 * c)).toISOString().slice(0, 10)

/** The body each format sends for campaign `c`'s values. */
function bodyOf(format: Format, c: number): { type: string; text: string } {
  const rows = valuesOf(c)
  const elements = Array.from({ length: INDICATORS }, (_, i) => `I${i + 1}`)
  const day = periodOf(c)
  if (format === 'upload') {
    const lines = [['campaign', 'geocode', ...elements].join(','), ...rows.map((r) => [`C${c}`, r.orgUnit, ...r.values].join(','))]
    return { type: 'text/csv', text: lines.join('\n') }
  }
  if (format === 'json') {
    const dataValues = rows.flatMap((r) =>
      r.values.map((value, i) => ({ dataElement: elements[i], period: day.replaceAll('-', ''), orgUnit: r.orgUnit, value })),
    )
    return { type: 'application/json', text: JSON.stringify({ dataValues }) }
  }
  if (format === 'csv') {
    const lines = ['dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value']
    for (const r of rows) r.values.forEach((value, i) => lines.push(`${elements[i]},${day.replaceAll('-', '')},${r.orgUnit},,,${value}`))
    return { type: 'application/csv', text: lines.join('\n') }
  }
  const groups = rows.map(
    (r) =>
      `<group orgUnit="${r.orgUnit}" period="${day}/P1D" dataSet="C${c}">${r.values.map((value, i) => `<dataValue dataElement="${elements[i]}" value="${value}"/>`).join('')}</group>`,
  )
  return { type: 'application/adx+xml', text: `<adx xmlns="urn:ihe:qrph:adx:2015" exported="2016-01-01T00:00:00Z">${groups.join('')}</adx>` }
}

/** POST `text` to `path`; the answer's JSON, or an error naming the status. */
function post(port: number, path: string, type: string, text: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method: 'POST', path, headers: { authorization: `ApiToken ${KEY}`, 'content-type': type } },
      (res) => {
        let answer = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => (answer += chunk))
        res.on('end', () =>
          (res.statusCode ?? 500) >= 300 ? reject(new Error(`${path}: ${res.statusCode} ${answer.slice(0, 300)}`)) : resolve(JSON.parse(answer)),
        )
      },
    )
    request.on('error', reject)
    request.end(text)
  })
}

/** One round: campaign `c`'s values in `format`, end to end (stored, aggregated); its seconds. */
async function round(port: number, api: ReturnType<typeof apiClient>, format: Format, c: number): Promise<number> {
  const { type, text } = bodyOf(format, c)
  doing(`${format}: ${PLACES * INDICATORS} values into campaign C${c}`)
  const started = performance.now()
  if (format === 'upload') {
    const doc = await api('POST', 'document/', { docfile: Buffer.from(text).toString('base64'), doc_title: `C${c}.csv`, file_type: 'campaign' })
    await api('GET', `transform_upload/?document_id=${doc.id}`)
  } else {
    const answer = (await post(port, '/api/dataValueSets', type, text)) as { response: { importCount: { imported: number }; conflicts: unknown[] } }
    if (answer.response.importCount.imported !== PLACES * INDICATORS || answer.response.conflicts.length) {
      throw new Error(`${format}: ${JSON.stringify(answer.response).slice(0, 400)}`)
    }
  }
  return (performance.now() - started) / 1000
}

async function main() {
  const port = 4009
  // One campaign per round, and one for the warm-up.
  await onNationalServer({ adminUrl: ADMIN_URL, name: 'dhis2', port, rows: (1 + PAIRS * FORMATS.length) * LOCATIONS }, async (api) => {
    await round(port, api, 'json', 1)
    const seconds = new Map<Format, number[]>(FORMATS.map((f) => [f, []]))
    let campaign = 2
    for (let pair = 0; pair < PAIRS; pair++) {
      // Alternated, the order turned each pair: no format always follows another.
      const order = [...FORMATS.slice(pair % FORMATS.length), ...FORMATS.slice(0, pair % FORMATS.length)]
      for (const format of order) seconds.get(format)!.push(await round(port, api, format, campaign++))
    }
    printTable(seconds)
  })
}

/** Each format's rounds, median and speed against the CSV upload. */
function printTable(seconds: Map<Format, number[]>) {
  const values = PLACES * INDICATORS
  const upload = median(seconds.get('upload')!)
  console.log(`${values} values a round (${PLACES} districts × ${INDICATORS} indicators), ${PAIRS} rounds of each, alternated`)
  console.log('| format | seconds (each round) | median | values/s | speed against the CSV upload |')
  console.log('|---|---|---|---|---|')
  for (const format of FORMATS) {
    const each = seconds.get(format)!
    const m = median(each)
    const name = format === 'upload' ? 'campaign CSV upload' : `data value set, ${format.toUpperCase()}`
    console.log(`| ${name} | ${each.map((s) => s.toFixed(2)).join(', ')} | ${m.toFixed(2)} | ${Math.round(values / m)} | ${(upload / m).toFixed(2)} |`)
  }
}

await main()
