// Form parts several pages share: a checkbox list and a location with its depth.
import { html } from '../html.js'
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

export const DEPTHS = [
  [0, 'The location itself'],
  [1, 'One level down'],
  [2, 'Two levels down'],
  [3, 'Three levels down'],
]

/** A location among those this user may see, found by typing, and how far down from it to read. */
export function LocationPicker({ catalog, locationId, depth, onChange }) {
  return html`<${LocationSearch} catalog=${catalog} label="Location" locationId=${locationId} onChange=${(id) => onChange({ locationId: id, depth })} />
    <label>Depth
      <select value=${depth} onChange=${(e) => onChange({ locationId, depth: Number(e.target.value) })}>
        ${DEPTHS.map(([d, label]) => html`<option key=${d} value=${d}>${label}</option>`)}
      </select>
    </label>`
}
