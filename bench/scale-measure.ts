// What bench:scale times at each size, on one campaign: reads (a dashboard's data missed and hit, a
// province's values, the campaign's CSV export), a district's correction uploaded end to end, a data
// entry and its parents' totals, the campaign's agg_refresh. Each read's miss is asked with
// `Cache-Control: no-cache`, which reaches every cache the answer is built from.
import http from 'node:http'
import { doing, median } from './lib.js'
import { type apiClient, INDICATORS, KEY } from './national.js'
import { campaignCsv, PERCENT, SUM, upload } from './scale-grow.js'

type Api = ReturnType<typeof apiClient>
const auth = { authorization: `ApiKey admin:${KEY}` }
const NO_CACHE = { 'cache-control': 'no-cache' }
/** The province read, and its first district, corrected (district g's province is 2 + g % 100). */
const PROVINCE = 42
const DISTRICT = 140

/** GET `path`, the whole body drained; its time in ms. Throws on a status other than 200. */
export function timedGet(port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: `/api/v1/${path}`, headers: { ...auth, ...headers } }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`))
          else resolve(performance.now() - started)
        })
      })
      .on('error', reject)
  })
}

/** The median time of `n` runs of `work`. */
async function medianOf(n: number, work: () => Promise<number>): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < n; i++) times.push(await work())
  return median(times)
}

const elapsed = async (work: () => Promise<unknown>) => {
  const started = performance.now()
  await work()
  return performance.now() - started
}

/** A four-chart country dashboard whose charts take the view's campaign; its id. */
export async function countryDashboard(api: Api): Promise<number> {
  const byProvince = { location_ids: [1], location_depth: 1 }
  const charts = [
    { type: 'ColumnChart', indicator_ids: [7], ...byProvince },
    { type: 'PieChart', indicator_ids: [8], ...byProvince },
    { type: 'ChoroplethMap', indicator_ids: [9], ...byProvince },
    { type: 'TableChart', indicator_ids: [1, 2, SUM, PERCENT], ...byProvince },
  ]
  const uuids = charts.map((_, i) => `scale-${i}`)
  for (const [i, chart_json] of charts.entries()) await api('POST', 'custom_chart/', { uuid: uuids[i], title: `scale chart ${i}`, chart_json })
  const dashboard = await api('POST', 'dashboard/', { title: 'scale dashboard', rows: [{ charts: uuids.slice(0, 2) }, { charts: uuids.slice(2) }] })
  return dashboard.id as number
}

/** The province's value of `indicator` in `campaign`, read afresh. */
async function provinceValue(api: Api, campaign: number, indicator: number): Promise<number> {
  const answer = await api('GET', `campaign_datapoint/?indicator__in=${indicator}&campaign__in=${campaign}&location_id__in=${PROVINCE}`, undefined, NO_CACHE)
  return (answer.objects as Array<{ value: number }>)[0].value
}

/** Every operation's time in ms on `campaign`, named as the table prints them. */
export async function measureCampaign(port: number, api: Api, dashboard: number, campaign: number, round: number) {
  const times: Record<string, number> = {}
  const indicators = Array.from({ length: INDICATORS }, (_, i) => i + 1).join(',')
  const reads: Array<[string, string]> = [
    ['dashboard data', `dashboard/${dashboard}/data/?campaign=${campaign}`],
    ['province values', `campaign_datapoint/?indicator__in=${indicators}&campaign__in=${campaign}&location_id=${PROVINCE}&location_depth=1`],
  ]
  for (const [name, path] of reads) {
    doing(`campaign ${campaign}: ${name}, missed and hit`)
    times[`${name}, missed`] = await medianOf(3, () => timedGet(port, path, NO_CACHE))
    times[`${name}, hit`] = await medianOf(10, () => timedGet(port, path))
  }
  doing(`campaign ${campaign}: its CSV export`)
  times['CSV export'] = await medianOf(2, () =>
    timedGet(port, `campaign_datapoint/?indicator__in=${indicators},${SUM},${PERCENT}&campaign__in=${campaign}&location_id=1&location_depth=2&format=csv`),
  )
  doing(`campaign ${campaign}: a district's correction, end to end`)
  const corrections: Array<{ total: number; timings: Record<string, number> }> = []
  for (let i = 1; i <= 3; i++) {
    const started = performance.now()
    const report = await upload(api, campaignCsv(campaign, [DISTRICT], 1000 * (round * 3 + i)), `correction ${campaign} ${round}.${i}.csv`)
    if (report.recomputed_keys !== INDICATORS) throw new Error(`a correction recomputed ${report.recomputed_keys} keys, not ${INDICATORS}`)
    corrections.push({ total: performance.now() - started, timings: report.timings_ms })
  }
  times['correction, end to end'] = median(corrections.map((c) => c.total))
  times['correction, its recompute'] = median(corrections.map((c) => c.timings.recompute))
  const phases = Object.keys(corrections[0].timings).map((phase) => `${phase} ${Math.round(median(corrections.map((c) => c.timings[phase])))}`)
  console.log(`campaign ${campaign}, a correction's phases (ms, median of 3): ${phases.join(', ')}`)
  Object.assign(times, await entryTimes(api, campaign, round))
  doing(`campaign ${campaign}: agg_refresh`)
  times.agg_refresh = await elapsed(() => api('GET', `agg_refresh/?campaign_id=${campaign}`))
  return times
}

/** A data entry at the district, then its province's total read: each timed, the total checked. */
async function entryTimes(api: Api, campaign: number, round: number) {
  doing(`campaign ${campaign}: a data entry and its parents' totals`)
  const before = await provinceValue(api, campaign, 3)
  const current = (await api('GET', `campaign_datapoint/?indicator__in=3&campaign__in=${campaign}&location_id__in=${DISTRICT}`, undefined, NO_CACHE))
    .objects as Array<{ id: number; value: number }>
  const value = 5000 + round
  // As the entry page sends a changed cell: a PATCH of the row that holds it.
  const write = await elapsed(() => api('PATCH', `campaign_datapoint/${current[0].id}/`, { value }))
  let after = 0
  const total = await elapsed(async () => (after = await provinceValue(api, campaign, 3)))
  if (after - before !== value - current[0].value) throw new Error(`the province's total moved by ${after - before}, not ${value - current[0].value}`)
  return { 'data entry': write, "its parents' total read": total }
}
