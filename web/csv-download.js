// The people's CSV downloads: the API's CSV of a read (names beside the ids) with its values as people
// read them (a percent as "4.38 %", yes or no as words; counts stay numbers a spreadsheet sums), saved
// under a name that says what it holds. The link's own address stays the API's machine-readable CSV.
// Pure functions but `downloadCsv` (tested in node and in Chromium).
import { formatValue } from './format.js'

/**
 * The lines of a CSV text as their cells written (quotes kept), RFC 4180: quoted cells may hold
 * commas, quotes doubled and line breaks.
 * @param {string} text
 * @returns {string[][]}
 */
export function csvCells(text) {
  const lines = []
  let cells = []
  let start = 0
  let quoted = false
  for (let i = 0; i <= text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') i++
      else if (c === '"') quoted = false
      continue
    }
    if (c === '"') quoted = true
    else if (c === ',' || c === '\n' || c === '\r' || c === undefined) {
      cells.push(text.slice(start, i))
      if (c === '\r' && text[i + 1] === '\n') i++
      start = i + 1
      if (c !== ',') {
        // The text's last line break ends the last line; it does not open an empty one.
        if (!(c === undefined && cells.length === 1 && cells[0] === '')) lines.push(cells)
        cells = []
      }
    }
  }
  return lines
}

/** A cell's text as written in a CSV (quotes removed). */
const unquote = (cell) => (cell.startsWith('"') && cell.endsWith('"') ? cell.slice(1, -1).replaceAll('""', '"') : cell)
/** A text as a CSV cell (quoted when it holds a comma, a quote or a line break). */
const quote = (text) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text)

/**
 * The API's CSV with the values of percent and yes/no indicators as people read them: in the wide
 * CSV, each column named by such an indicator's short name; in the long one, `value` by the line's
 * `indicator_id`. Every other cell is kept as written.
 * @param {string} text the API's CSV
 * @param {{ indicators: Array<{ id: number, short_name: string, data_format: string }> }} catalog
 */
export function peoplesCsv(text, catalog) {
  const lines = csvCells(text)
  if (!lines.length) return text
  const eol = text.includes('\r\n') ? '\r\n' : '\n'
  const shown = (format) => format === 'pct' || format === 'bool'
  const formatOf = new Map(catalog.indicators.map((i) => [i.id, i.data_format]))
  const byName = new Map(catalog.indicators.filter((i) => shown(i.data_format)).map((i) => [i.short_name, i.data_format]))
  const header = lines[0].map(unquote)
  const wide = header.map((name) => byName.get(name))
  const [indicatorAt, valueAt] = [header.indexOf('indicator_id'), header.indexOf('value')]
  const cellOf = (cell, format) => {
    const value = unquote(cell)
    return shown(format) && value !== '' && Number.isFinite(Number(value)) ? quote(formatValue(Number(value), format)) : cell
  }
  const rows = lines.slice(1).map((cells) =>
    cells.map((cell, i) => {
      if (wide[i]) return cellOf(cell, wide[i])
      if (i === valueAt && indicatorAt >= 0) return cellOf(cell, formatOf.get(Number(unquote(cells[indicatorAt]))))
      return cell
    }),
  )
  const body = [lines[0], ...rows].map((cells) => cells.join(',')).join(eol)
  return /\r?\n$/.test(text) ? `${body}${eol}` : body
}

/** A name as a file name's part: lower case, ASCII letters and digits, words joined by hyphens. */
const slug = (text) =>
  String(text)
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')

/** Names of a list, the first two and how many more: "a_b_3-more". */
const some = (names) => (names.length > 2 ? [...names.slice(0, 2), `${names.length - 2}-more`] : names)

/**
 * The file name of a read's CSV after what it holds: its indicators, its campaigns or dates, its
 * place ("children-missed_march-2016-nid-opv_veridia.csv"), the resource's name when it says nothing.
 * @param {string} path the API read (`/campaign_datapoint/?indicator__in=…`)
 * @param {{ indicatorName: Map<number, string>, campaignName: Map<number, string>, locationName: Map<number, string> }} catalog
 */
export function csvFileName(path, catalog) {
  const url = new URL(path, 'http://api')
  const ids = (name) => (url.searchParams.get(name) ?? '').split(',').filter(Boolean).map(Number)
  const names = (list, map) => list.map((id) => map?.get(id) ?? String(id))
  const locations = [...ids('location_id'), ...ids('location_id__in'), ...ids('parent_location_id__in')]
  const dates = [url.searchParams.get('start_date'), url.searchParams.get('end_date')].filter(Boolean)
  const parts = [
    ...some(names(ids('indicator__in'), catalog.indicatorName)),
    ...some(names(ids('campaign__in'), catalog.campaignName)),
    dates.join('-to-'),
    url.searchParams.get('group_by_time') ?? '',
    ...some(names(locations, catalog.locationName)),
  ]
    .map(slug)
    .filter(Boolean)
  const name = parts
    .join('_')
    .slice(0, 120)
    .replace(/[-_]+$/, '')
  return `${name || url.pathname.split('/').filter(Boolean)[0] || 'values'}.csv`
}

/**
 * A click on a CSV link: the API's CSV read, written for people and saved under its name (an error
 * opens the API's own answer, which says what went wrong).
 * @param {MouseEvent} event
 * @param {string} path the CSV read, without `/api/v1`
 * @param {any} catalog
 */
export async function downloadCsv(event, path, catalog) {
  event.preventDefault()
  const response = await fetch(`/api/v1${path}`, { credentials: 'same-origin' })
  if (!response.ok) {
    window.location.assign(`/api/v1${path}`)
    return
  }
  const url = URL.createObjectURL(new Blob([peoplesCsv(await response.text(), catalog)], { type: 'text/csv;charset=utf-8' }))
  const link = document.createElement('a')
  link.href = url
  link.download = csvFileName(path, catalog)
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}
