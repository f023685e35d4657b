// Form parts several pages share: a checkbox list and a location with its depth.
import { html } from '../html.js'
import { t } from '../i18n.js'
import { LocationSearch } from './location-search.js'

export function Checkboxes({ legend, options, selected, onChange }) {
  const toggle = (id, on) => onChange(on ? [...selected, id] : selected.filter((x) => x !== id))
  return html`<fieldset class="checkboxes"><legend>${legend}</legend>
    ${options.map(
      (o) =>
        html`<label class="choice" key=${o.id}><input type="checkbox" checked=${selected.includes(o.id)} onChange=${(e) => toggle(o.id, e.target.checked)} /> ${o.label}</label>`,
    )}
  </fieldset>`
}

/** @type {Array<[number, () => string]>} */
export const DEPTHS = [
  [0, () => t('The location itself')],
  [1, () => t('One level down')],
  [2, () => t('Two levels down')],
  [3, () => t('Three levels down')],
]

/** A location among those this user may see, found by typing, and how far down from it to read. */
export function LocationPicker({ catalog, locationId, depth, onChange }) {
  return html`<${LocationSearch} catalog=${catalog} label=${t('Location')} locationId=${locationId} onChange=${(id) => onChange({ locationId: id, depth })} />
    <label>${t('Depth')}
      <select value=${depth} onChange=${(e) => onChange({ locationId, depth: Number(e.target.value) })}>
        ${DEPTHS.map(([d, label]) => html`<option key=${d} value=${d}>${label()}</option>`)}
      </select>
    </label>`
}
