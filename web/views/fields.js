// Form parts several pages share: a checkbox list and a location with its depth.
import { html } from '../html.js'

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

/** A location among those this user may see, indented by level, and how far down from it to read. */
export function LocationPicker({ catalog, locationId, depth, onChange }) {
  const level = (l) => catalog.pathTo(l.id).length - 1
  return html`<label>Location
      <select value=${locationId ?? ''} onChange=${(e) => onChange({ locationId: Number(e.target.value), depth })}>
        ${catalog.locations.map((l) => html`<option key=${l.id} value=${l.id}>${'\u00a0\u00a0'.repeat(level(l))}${l.name}</option>`)}
      </select>
    </label>
    <label>Depth
      <select value=${depth} onChange=${(e) => onChange({ locationId, depth: Number(e.target.value) })}>
        ${DEPTHS.map(([d, label]) => html`<option key=${d} value=${d}>${label}</option>`)}
      </select>
    </label>`
}
