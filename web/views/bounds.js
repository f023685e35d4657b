// An indicator's bounds, edited by an administrator: good and bad bounds (their order says whether
// higher or lower is better) and named ranges, by whose status the dashboards colour values; and the
// share of a location's children under which its sum is flagged incomplete.
import { useState } from 'preact/hooks'
import { change } from '../api.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { statusLegend } from '../status.js'
import { formatValue } from '../format.js'
import { ActionMessage, useActions, useRows } from './actions.js'

/** A number input's value: empty is none. */
const numberOf = (form, name) => (form.get(name) === '' ? null : Number(form.get(name)))

/**
 * Bounds are typed and shown in the indicator's unit: a percent indicator's as percents ("3" for 3 %),
 * stored as the fraction its values are (0.03), the one form the API keeps.
 */
const unitOf = (indicator) => (indicator?.data_format === 'pct' ? 100 : 1)
/** A stored bound as typed (3 for 0.03), without the float noise of × 100. */
const typed = (value, unit) => (value == null ? '' : Number((value * unit).toPrecision(12)))
/** A typed bound as stored. */
const stored = (form, name, unit) => {
  const value = numberOf(form, name)
  return value === null ? null : Number((value / unit).toPrecision(12))
}
export function IndicatorBounds({ catalog, onChange }) {
  const [indicatorId, setIndicatorId] = useState(catalog.indicators[0]?.id ?? null)
  const { message, setMessage, version, act } = useActions(onChange)
  const indicator = catalog.indicators.find((i) => i.id === indicatorId)
  const ranges = useRows(indicatorId === null ? null : `/indicator_bound/?indicator_id=${indicatorId}&limit=0`, version, (e) =>
    setMessage({ text: e.message, error: true }),
  )
  const unit = unitOf(indicator)
  const inUnit = (label) => (unit === 100 ? `${label} (%)` : label)
  const saveBounds = act(t('Bounds saved'), (form) => {
    const percent = numberOf(form, 'coverage_percent')
    return change('PATCH', `/indicator/${indicatorId}/`, {
      good_bound: stored(form, 'good_bound', unit),
      bad_bound: stored(form, 'bad_bound', unit),
      coverage_threshold: percent === null ? null : percent / 100,
    })
  })
  const addRange = act(t('Range added'), (form) =>
    change('POST', '/indicator_bound/', {
      indicator_id: indicatorId,
      bound_name: form.get('bound_name'),
      mn_val: stored(form, 'mn_val', unit),
      mx_val: stored(form, 'mx_val', unit),
      direction: Number(form.get('direction')),
      location_type_id: form.get('location_type_id') === '' ? null : Number(form.get('location_type_id')),
    }),
  )
  const removeRange = (range) => act(t('Range “{name}” removed', { name: range.bound_name }), () => change('DELETE', `/indicator_bound/${range.id}/`))
  // A range's limits as the legend writes them (3 %), an open end as infinity.
  const limit = (value, open) => (value == null ? open : formatValue(value, indicator?.data_format))
  const legend = statusLegend(catalog.indicatorBounds.get(indicatorId), indicator?.data_format)
  // Levels from the country down; a range of one level grades only the locations of that type.
  const levels = [...(catalog.types ?? [])].sort((a, b) => a.admin_level - b.admin_level)
  const levelOf = (range) => levels.find((l) => l.id === range.location_type_id)?.name
  const rangeText = (r) => {
    const limits = { name: r.bound_name, min: limit(r.mn_val, '−∞'), max: limit(r.mx_val, '∞') }
    const text = r.direction < 0 ? t('{name}: from {min} to {max}, {max} included', limits) : t('{name}: from {min} to {max}, {min} included', limits)
    return r.location_type_id == null
      ? `${text}, ${t('at every level')}`
      : `${text}, ${t('at {level} level only', { level: levelOf(r) ?? r.location_type_id })}`
  }
  return html`<section aria-labelledby="bounds-heading">
    <h2 id="bounds-heading">${t('Indicator bounds')}</h2>
    <p class="hint">${t('Dashboards colour a value by its status: the first range holding it, else good, ok or bad from the two bounds.')}</p>
    <p class="hint">${t('A range of one level grades only the locations of that level, before the ranges of every level.')}</p>
    <${ActionMessage} message=${message} />
    <label>${t('Indicator')}
      <select value=${indicatorId ?? ''} onChange=${(e) => setIndicatorId(Number(e.target.value))}>
        ${catalog.indicators.map((i) => html`<option key=${i.id} value=${i.id}>${i.short_name}</option>`)}
      </select>
    </label>
    ${
      indicator &&
      html`<form class="inline" key=${`bounds-${indicatorId}-${version}`} onSubmit=${saveBounds}>
        <label>${inUnit(t('Good bound'))} <input name="good_bound" type="number" step="any" defaultValue=${typed(indicator.good_bound, unit)} /></label>
        <label>${inUnit(t('Bad bound'))} <input name="bad_bound" type="number" step="any" defaultValue=${typed(indicator.bad_bound, unit)} /></label>
        <label>${t('Flag a total reported by fewer of its places than (%)')}
          <input name="coverage_percent" type="number" min="0" max="100" step="any" defaultValue=${indicator.coverage_threshold == null ? '' : indicator.coverage_threshold * 100} /></label>
        <button type="submit">${t('Save bounds')}</button>
      </form>`
    }
    <h3>${t('Ranges')}</h3>
    ${
      ranges.length === 0
        ? html`<p>${t('No ranges.')}</p>`
        : html`<ul class="cards">${ranges.map(
            (r) => html`<li key=${r.id} class="chart-item"><span>${rangeText(r)}</span>
              <button class="secondary" onClick=${removeRange(r)} aria-label=${t('Remove range {name}', { name: r.bound_name })}>${t('Remove')}</button></li>`,
          )}</ul>`
    }
    <form class="inline new-range" onSubmit=${addRange}>
      <label>${t('Range name')} <input name="bound_name" required maxlength="255" /></label>
      <label>${inUnit(t('From'))} <input name="mn_val" type="number" step="any" /></label>
      <label>${inUnit(t('To'))} <input name="mx_val" type="number" step="any" /></label>
      <label>${t('Limit included')}
        <select name="direction"><option value="1">${t('the lower one')}</option><option value="-1">${t('the upper one')}</option></select>
      </label>
      <label>${t('Level')}
        <select name="location_type_id">
          <option value="">${t('Every level')}</option>
          ${levels.map((l) => html`<option key=${l.id} value=${l.id}>${l.name}</option>`)}
        </select>
      </label>
      <button type="submit">${t('Add range')}</button>
    </form>
    ${legend.length > 0 && html`<ul class="status-legend" aria-label=${t('Statuses of this indicator')}>${legend.map((item, i) => html`<li key=${i}><span class=${`swatch ${item.className}`} aria-hidden="true"></span>${item.label}</li>`)}</ul>`}
  </section>`
}
