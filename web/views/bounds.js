// An indicator's bounds, edited by an administrator: good and bad bounds (their order says whether
// higher or lower is better) and named ranges, by whose status the dashboards colour values; and the
// share of a location's children under which its sum is flagged incomplete.
import { useState } from 'preact/hooks'
import { change } from '../api.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { statusLegend } from '../status.js'
import { ActionMessage, useActions, useRows } from './actions.js'

/** A number input's value: empty is none. */
const numberOf = (form, name) => (form.get(name) === '' ? null : Number(form.get(name)))

export function IndicatorBounds({ catalog, onChange }) {
  const [indicatorId, setIndicatorId] = useState(catalog.indicators[0]?.id ?? null)
  const { message, setMessage, version, act } = useActions(onChange)
  const indicator = catalog.indicators.find((i) => i.id === indicatorId)
  const ranges = useRows(indicatorId === null ? null : `/indicator_bound/?indicator_id=${indicatorId}&limit=0`, version, (e) =>
    setMessage({ text: e.message, error: true }),
  )
  const saveBounds = act(t('Bounds saved'), (form) => {
    const percent = numberOf(form, 'coverage_percent')
    return change('PATCH', `/indicator/${indicatorId}/`, {
      good_bound: numberOf(form, 'good_bound'),
      bad_bound: numberOf(form, 'bad_bound'),
      coverage_threshold: percent === null ? null : percent / 100,
    })
  })
  const addRange = act(t('Range added'), (form) =>
    change('POST', '/indicator_bound/', {
      indicator_id: indicatorId,
      bound_name: form.get('bound_name'),
      mn_val: numberOf(form, 'mn_val'),
      mx_val: numberOf(form, 'mx_val'),
      direction: Number(form.get('direction')),
    }),
  )
  const removeRange = (range) => act(t('Range “{name}” removed', { name: range.bound_name }), () => change('DELETE', `/indicator_bound/${range.id}/`))
  const legend = statusLegend(catalog.indicatorBounds.get(indicatorId), indicator?.data_format)
  return html`<section aria-labelledby="bounds-heading">
    <h2 id="bounds-heading">${t('Indicator bounds')}</h2>
    <p class="hint">${t('Dashboards colour a value by its status: the first range holding it, else good, ok or bad from the two bounds.')}</p>
    <${ActionMessage} message=${message} />
    <label>${t('Indicator')}
      <select value=${indicatorId ?? ''} onChange=${(e) => setIndicatorId(Number(e.target.value))}>
        ${catalog.indicators.map((i) => html`<option key=${i.id} value=${i.id}>${i.short_name}</option>`)}
      </select>
    </label>
    ${
      indicator &&
      html`<form class="inline" key=${`bounds-${indicatorId}-${version}`} onSubmit=${saveBounds}>
        <label>${t('Good bound')} <input name="good_bound" type="number" step="any" defaultValue=${indicator.good_bound ?? ''} /></label>
        <label>${t('Bad bound')} <input name="bad_bound" type="number" step="any" defaultValue=${indicator.bad_bound ?? ''} /></label>
        <label>${t('Flag a sum reported by under (% of children)')}
          <input name="coverage_percent" type="number" min="0" max="100" step="any" defaultValue=${indicator.coverage_threshold == null ? '' : indicator.coverage_threshold * 100} /></label>
        <button type="submit">${t('Save bounds')}</button>
      </form>`
    }
    <h3>${t('Ranges')}</h3>
    ${
      ranges.length === 0
        ? html`<p>${t('No ranges.')}</p>`
        : html`<ul class="cards">${ranges.map(
            (
              r,
            ) => html`<li key=${r.id} class="chart-item"><span>${r.direction < 0 ? t('{name}: {min} to {max}, holding its upper limit', { name: r.bound_name, min: r.mn_val ?? '−∞', max: r.mx_val ?? '∞' }) : t('{name}: {min} to {max}, holding its lower limit', { name: r.bound_name, min: r.mn_val ?? '−∞', max: r.mx_val ?? '∞' })}</span>
              <button class="secondary" onClick=${removeRange(r)} aria-label=${t('Remove range {name}', { name: r.bound_name })}>${t('Remove')}</button></li>`,
          )}</ul>`
    }
    <form class="inline new-range" onSubmit=${addRange}>
      <label>${t('Range name')} <input name="bound_name" required maxlength="255" /></label>
      <label>${t('From')} <input name="mn_val" type="number" step="any" /></label>
      <label>${t('To')} <input name="mx_val" type="number" step="any" /></label>
      <label>${t('Holds')}
        <select name="direction"><option value="1">${t('its lower limit')}</option><option value="-1">${t('its upper limit')}</option></select>
      </label>
      <button type="submit">${t('Add range')}</button>
    </form>
    ${legend.length > 0 && html`<ul class="status-legend" aria-label=${t('Statuses of this indicator')}>${legend.map((item) => html`<li key=${item.status}><span class=${`swatch ${item.className}`} aria-hidden="true"></span>${item.label}</li>`)}</ul>`}
  </section>`
}
