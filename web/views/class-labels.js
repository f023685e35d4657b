// The labels of a class indicator's values (LQAS: 1 pass, 0 fail), edited by an administrator: an
// upload may then give the label instead of the number, and tables and tooltips show the label.
import { useState } from 'preact/hooks'
import { change } from '../api.js'
import { html } from '../html.js'
import { t } from '../i18n.js'
import { ActionMessage, useActions, useRows } from './actions.js'

export function ClassLabels({ catalog }) {
  const classes = catalog.indicators.filter((i) => i.data_format === 'class')
  const [indicatorId, setIndicatorId] = useState(classes[0]?.id ?? null)
  const { message, setMessage, version, act } = useActions()
  const labels = useRows(indicatorId === null ? null : `/indicator_class_map/?indicator_id=${indicatorId}&limit=0`, version, (e) =>
    setMessage({ text: e.message, error: true }),
  )
  const addLabel = act(t('Label added'), (form) =>
    change('POST', '/indicator_class_map/', { indicator_id: indicatorId, value: Number(form.get('value')), label: form.get('label') }),
  )
  const removeLabel = (entry) => act(t('Label “{label}” removed', { label: entry.label }), () => change('DELETE', `/indicator_class_map/${entry.id}/`))
  return html`<section aria-labelledby="class-labels-heading">
    <h2 id="class-labels-heading">${t('Class labels')}</h2>
    ${
      classes.length === 0
        ? html`<p>${t('No class indicator yet (an indicator whose data format is “class”).')}</p>`
        : html`<p class="hint">${t('A class indicator’s values are classes (LQAS: pass, fail): uploads may give the label, tables and tooltips show it, and a location counts its subtree per class.')}</p>
          <${ActionMessage} message=${message} />
          <label>${t('Class indicator')}
            <select value=${indicatorId ?? ''} onChange=${(e) => setIndicatorId(Number(e.target.value))}>
              ${classes.map((i) => html`<option key=${i.id} value=${i.id}>${i.short_name}</option>`)}
            </select>
          </label>
          ${
            labels.length === 0
              ? html`<p>${t('No labels.')}</p>`
              : html`<ul class="cards">${labels.map(
                  (entry) => html`<li key=${entry.id} class="chart-item"><span>${entry.value}: ${entry.label}</span>
                    <button class="secondary" onClick=${removeLabel(entry)} aria-label=${t('Remove label {label}', { label: entry.label })}>${t('Remove')}</button></li>`,
                )}</ul>`
          }
          <form class="inline" onSubmit=${addLabel}>
            <label>${t('Value')} <input name="value" type="number" step="any" required /></label>
            <label>${t('Label')} <input name="label" required maxlength="255" /></label>
            <button type="submit">${t('Add label')}</button>
          </form>`
    }
  </section>`
}
