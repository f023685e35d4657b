// An upload's report as people read it (the `ingest_stats` of transform_upload and refresh_master):
// what was saved, every line skipped and why, every cell refused, the cells a file gives twice, the
// keys two cells wrote, the values it changed (from what to what), and the values a validation rule
// finds implausible. Lines are the file's own line numbers (the header is line 1).
import { list, query } from '../api.js'
import { formatCount, formatValue } from '../format.js'
import { html } from '../html.js'
import { t, tn } from '../i18n.js'
import { useRead } from './use-read.js'
import { OPERATOR_WORDS } from './value-flags.js'

/** A file's line number for a data row (its 0-based index below the header line). */
export const lineOf = (rowNumber) => rowNumber + 2

/** The parts of a report only the transform writes: kept when a refresh_master's report follows it. */
const TRANSFORM_PARTS = ['submissions', 'duplicates', 'codes']

/** A refresh's report completed by the transform's before it (the refresh leaves those parts out). */
export function mergedReport(transformed, latest) {
  if (!latest) return transformed ?? null
  if (latest.action !== 'refresh_master' || !transformed) return latest
  return { ...Object.fromEntries(TRANSFORM_PARTS.filter((k) => k in transformed).map((k) => [k, transformed[k]])), ...latest }
}

/** Why a line was skipped, in words. */
function reasonWord(reason) {
  const words = {
    missing_location: t('its location code is not mapped'),
    missing_campaign: t('its campaign is not mapped'),
    missing_date: t('it has no date'),
    location_forbidden: t('its location is outside your locations'),
  }
  return words[reason] ?? reason
}

/**
 * A table of a report's items: a heading, a sentence, the columns and each item's cells; on a phone each
 * item a block of its cells, each under its column's name (a changed value's After was out of sight).
 */
function ReportTable({ id, title, intro, columns, rows, count, numeric = [] }) {
  const more = (count ?? rows.length) - rows.length
  // Numbers right-aligned, as in every other table of the app.
  const kind = (j) => (numeric.includes(j) ? 'number' : undefined)
  return html`<section aria-labelledby=${id} class="report-part">
    <h3 id=${id}>${title}</h3>
    ${intro && html`<p>${intro}</p>`}
    <div class="table-scroll" tabindex="0" role="region" aria-label=${t('{title}, scrollable', { title })}><table class="stacked">
      <caption class="visually-hidden">${title}</caption>
      <thead><tr>${columns.map((c, j) => html`<th key=${c} scope="col" class=${kind(j)}>${c}</th>`)}</tr></thead>
      <tbody>${rows.map((cells, i) => html`<tr key=${i}>${cells.map((c, j) => html`<td key=${j} class=${kind(j)} data-label=${columns[j]}>${c}</td>`)}</tr>`)}</tbody>
    </table></div>
    ${more > 0 && html`<p>${t('and {n} more.', { n: formatCount(more) })}</p>`}
  </section>`
}

/**
 * The counts: lines read and processed, values saved, campaigns recomputed; and each kind of line
 * skipped or cell refused, only when there is one (a tile of zero says nothing to the reader).
 */
function Summary({ report }) {
  const d = report.datapoints ?? {}
  const rows = report.rows ?? {}
  const s = report.submissions
  const items = [
    ...(s
      ? [
          [t('Lines in the file'), s.file_rows],
          [t('Lines repeating an earlier line’s key'), s.duplicate_keys],
          [t('Lines without a key'), s.empty_keys],
        ]
      : []),
    [t('Rows processed'), rows.processed],
    [t('Rows outside your locations'), rows.location_forbidden],
    [t('Rows without a known location'), rows.missing_location],
    [t('Rows without a known campaign'), rows.missing_campaign],
    [t('Rows without a date'), rows.missing_date],
    [t('Cells refused'), report.rejected_cells?.count],
    [t('Values inserted'), d.inserted],
    [t('Values updated'), d.updated],
    [t('Values unchanged'), d.unchanged],
    [t('Campaigns recomputed'), (report.campaigns_recomputed ?? []).length],
  ]
  const always = new Set([
    t('Lines in the file'),
    t('Rows processed'),
    t('Values inserted'),
    t('Values updated'),
    t('Values unchanged'),
    t('Campaigns recomputed'),
  ])
  const shown = items.filter(([label, value]) => always.has(label) || (value ?? 0) > 0)
  return html`<div class="summary"><dl>${shown.map(([label, value]) => html`<div key=${label}><dt>${label}</dt><dd>${formatCount(value ?? 0)}</dd></div>`)}</dl></div>`
}

/** What a cell's listed lines leave out: the report lists the first lines of a cell repeated on many. */
function unlisted({ row_count: rows, row_numbers: listed }) {
  const more = (rows ?? listed.length) - listed.length
  return more > 0 ? ` ${tn(more, '… and {n} more line', '… and {n} more lines', { n: formatCount(more) })}` : ''
}

/** A duplicate's key in its parts; a report from before they were written has the key alone. */
const keyCells = (d) => (d.location_code !== undefined ? [d.location_code, d.campaign_code ?? d.unique_key ?? ''] : [d.key, ''])

function Duplicates({ duplicates, policy }) {
  const outcome = { reject: t('None of these cells was saved.'), last: t('The later line’s value was saved.'), first: t('The earlier line’s value was saved.') }
  const intro = `${tn(duplicates.count, '{n} cell has different values on different lines of the file.', '{n} cells have different values on different lines of the file.', { n: formatCount(duplicates.count) })} ${outcome[policy] ?? ''}`
  return html`<${ReportTable}
    id="duplicates-heading"
    title=${t('Cells given two different values')}
    intro=${intro}
    columns=${[t('Location'), t('Campaign or key'), t('Column'), t('Lines'), t('Values')]}
    rows=${duplicates.items.map((d) => [...keyCells(d), d.column, `${d.row_numbers.map(lineOf).join(', ')}${unlisted(d)}`, `${d.values.join(' · ')}${unlisted(d)}`])}
    count=${duplicates.count}
  />`
}

/** A datapoint key (`location_indicator_campaign-or-date`) in names. */
function keyNames(uniqueIndex, catalog) {
  const [location, indicator, when] = uniqueIndex.split('_')
  const name = (map, id) => map.get(Number(id)) ?? id
  return [name(catalog.locationName, location), name(catalog.indicatorName, indicator), /^\d+$/.test(when) ? name(catalog.campaignName, when) : when]
}

function Conflicts({ conflicts, catalog }) {
  const cell = (c) => t('line {line}, {column}', { line: lineOf(c.row_number), column: c.column })
  return html`<${ReportTable}
    id="conflicts-heading"
    title=${t('Values written twice')}
    intro=${t('Two cells of the file give the same value of a location: the kept one was saved.')}
    columns=${[t('Location'), t('Indicator'), t('Campaign or date'), t('Kept'), t('Not saved')]}
    rows=${conflicts.items.map((c) => [...keyNames(c.unique_index, catalog), c.kept ? cell(c.kept) : t('none'), [...c.dropped.map((d) => `${cell(d)}: ${d.value}`), ...(c.dropped_count > c.dropped.length ? [`+${c.dropped_count - c.dropped.length}`] : [])].join(' · ')])}
    count=${conflicts.count}
  />`
}

/** Changed values a report lists: the first ones (a national re-upload may change millions). */
const CHANGED_SHOWN = 100

/**
 * The values an upload changed (not those it added), each named with what it was and what it became:
 * the report counts them only, the datapoint history has each (its rows of this document, and of the
 * job that wrote the report when it is known).
 */
function ChangedValues({ documentId, jobId, count, catalog }) {
  const path = `/datapoint_history/${query({ document_id: documentId, job_id: jobId ?? undefined, change: 'update', order_by: 'id', limit: CHANGED_SHOWN })}`
  const rows = useRead(() => list(path).catch(() => []), [path], []).value
  if (!rows.length) return null
  const name = (map, id) => map.get(id) ?? String(id)
  const format = (r) => catalog.indicatorFormat.get(r.indicator_id)
  return html`<${ReportTable}
    id="changed-heading"
    title=${t('Values changed')}
    intro=${t('Values the file changed, with what each was before.')}
    columns=${[t('Location'), t('Indicator'), t('Campaign or date'), t('Before'), t('After')]}
    numeric=${[3, 4]}
    rows=${rows.map((r) => [
      name(catalog.locationName, r.location_id),
      name(catalog.indicatorName, r.indicator_id),
      r.campaign_id != null ? name(catalog.campaignName, r.campaign_id) : r.data_date,
      formatValue(r.value_before, format(r)),
      formatValue(r.value_after, format(r)),
    ])}
    count=${Math.max(count, rows.length)}
  />`
}

/** The values a validation rule finds implausible, when the report carries them (a report may not). */
function Implausible({ validation, catalog }) {
  const items = Array.isArray(validation?.items) ? validation.items : []
  if (!(validation?.count > 0)) return null
  // A side: its indicator and value as people read them; a bound's limit in its indicator's format.
  const side = (s, formatOf) =>
    s.indicator_id == null
      ? formatValue(s.value, catalog.indicatorFormat.get(formatOf))
      : `${catalog.indicatorName.get(s.indicator_id) ?? s.indicator_id} ${formatValue(s.value, catalog.indicatorFormat.get(s.indicator_id))}`
  return html`<${ReportTable}
    id="implausible-heading"
    title=${t('Implausible values')}
    columns=${[t('Rule'), t('Location'), t('Campaign'), t('Value'), t('Operator'), t('Compared with')]}
    rows=${items.map((v) => [
      v.rule?.name ?? '',
      v.location?.name ?? v.location?.id ?? '',
      v.campaign?.name ?? catalog.campaignName.get(v.campaign?.id) ?? '',
      side(v.left),
      OPERATOR_WORDS[v.rule?.operator] ?? v.rule?.operator ?? '',
      side(v.right, v.left.indicator_id),
    ])}
    count=${validation.count}
  />`
}

/** The whole report of one document (`jobId`: the job that wrote it, when known). */
export function Report({ report, catalog, policy, documentId, jobId = null }) {
  const skipped = report.skipped_rows ?? { count: 0, items: [] }
  const badDates = report.submissions?.rejected_rows ?? { count: 0, items: [] }
  const rejected = report.rejected_cells ?? { count: 0, items: [] }
  return html`<div class="report">
    <${Summary} report=${report} />
    ${
      skipped.count + badDates.count > 0 &&
      html`<${ReportTable}
        id="skipped-heading"
        title=${t('Lines skipped')}
        columns=${[t('Line'), t('Why'), t('Location code'), t('Campaign')]}
        rows=${[
          ...badDates.items.map((r) => [lineOf(r.row_number), t('its date cannot be read: {reason}', { reason: r.reason }), '', '']),
          ...skipped.items.map((r) => [lineOf(r.row_number), reasonWord(r.reason), r.location_code, r.campaign_code]),
        ]}
        count=${skipped.count + badDates.count}
      />`
    }
    ${
      rejected.count > 0 &&
      html`<${ReportTable}
        id="rejected-heading"
        title=${t('Cells refused')}
        intro=${t('These cells were not saved; the rest of their line was.')}
        columns=${[t('Line'), t('Column'), t('Value'), t('Why')]}
        rows=${rejected.items.map((c) => [lineOf(c.row_number), c.column, String(c.value ?? ''), c.reason])}
        count=${rejected.count}
      />`
    }
    ${report.duplicates?.count > 0 && html`<${Duplicates} duplicates=${report.duplicates} policy=${policy} />`}
    ${report.conflicts?.count > 0 && html`<${Conflicts} conflicts=${report.conflicts} catalog=${catalog} />`}
    ${report.datapoints?.updated > 0 && html`<${ChangedValues} documentId=${documentId} jobId=${jobId} count=${report.datapoints.updated} catalog=${catalog} />`}
    <${Implausible} validation=${report.validation} catalog=${catalog} />
  </div>`
}
