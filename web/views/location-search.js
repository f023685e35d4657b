// A location by typing part of its name, for catalogs of any size (a country has ten thousand): an ARIA
// combobox whose list shows the first matches with their lineage ("Veridia › Eastvale › Ashford"),
// names starting with what was typed first. Keyboard: arrows move, Enter picks, Escape closes.
import { useMemo, useRef, useState } from 'preact/hooks'
import { fold } from '../format.js'
import { html } from '../html.js'
import { t } from '../i18n.js'

/** Matches shown at once: enough to pick from, few enough to draw at every key. */
const SHOWN = 20
let instances = 0

/**
 * The locations whose name holds `text` (case and accents aside), names starting with it first (the
 * shortest first, then by lineage), then the others; at most `limit`.
 * @param {Array<{ id: number, key: string, lineage: string }>} index
 * @param {string} text
 */
export function matchLocations(index, text, limit = SHOWN) {
  const wanted = fold(text.trim())
  if (!wanted) return index.slice(0, limit)
  const starts = []
  const contains = []
  for (const entry of index) {
    const at = entry.key.indexOf(wanted)
    if (at === 0) starts.push(entry)
    else if (at > 0 && contains.length < limit) contains.push(entry)
  }
  // The closest names first: "L98" before "L980" before "L9801", then by lineage.
  starts.sort((a, b) => a.key.length - b.key.length || a.lineage.localeCompare(b.lineage))
  return [...starts, ...contains].slice(0, limit)
}

export function LocationSearch({ catalog, label, locationId, onChange, allowNone = false, noneLabel = t('Everywhere'), hideLabel = false }) {
  const id = useMemo(() => `location-search-${++instances}`, [])
  const [text, setText] = useState(null)
  const [active, setActive] = useState(0)
  const input = useRef(null)
  const open = text !== null
  const matches = useMemo(() => (open ? matchLocations(catalog.searchIndex, text) : []), [open, text, catalog])
  const options = allowNone && open && !text.trim() ? [{ id: null, lineage: noneLabel }, ...matches] : matches
  const shown = locationId == null ? (allowNone ? noneLabel : '') : catalog.lineageOf(locationId)
  const pick = (option) => {
    setText(null)
    if (option) onChange(option.id)
  }
  const onKeyDown = (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault()
      if (!open) return setText('')
      const step = event.key === 'ArrowDown' ? 1 : -1
      setActive((active + step + options.length) % Math.max(1, options.length))
    } else if (event.key === 'Enter' && open) {
      event.preventDefault()
      pick(options[active])
    } else if (event.key === 'Escape' && open) {
      event.preventDefault()
      setText(null)
    }
  }
  return html`<div class="location-search">
    <label for=${id} class=${hideLabel ? 'visually-hidden' : undefined}>${label}</label>
    <input
      id=${id}
      ref=${input}
      role="combobox"
      aria-expanded=${open ? 'true' : 'false'}
      aria-controls=${`${id}-list`}
      aria-autocomplete="list"
      aria-activedescendant=${open && options[active] ? `${id}-option-${options[active].id}` : undefined}
      autocomplete="off"
      placeholder=${t('Type a name')}
      value=${open ? text : shown}
      onFocus=${() => setText('')}
      onBlur=${() => setText(null)}
      onInput=${(e) => {
        setText(e.target.value)
        setActive(0)
      }}
      onKeyDown=${onKeyDown}
    />
    <ul id=${`${id}-list`} role="listbox" aria-label=${t('{label}: matches', { label })} class="matches" hidden=${!open}>
      ${options.map(
        (option, i) => html`<li
          key=${option.id ?? 'none'}
          id=${`${id}-option-${option.id}`}
          role="option"
          aria-selected=${i === active ? 'true' : 'false'}
          onMouseDown=${(e) => {
            e.preventDefault()
            pick(option)
          }}
        >${option.lineage}</li>`,
      )}
      ${open && options.length === 0 && html`<li class="none" role="option" aria-disabled="true" aria-selected="false">${t('No location matches “{text}”', { text })}</li>`}
    </ul>
  </div>`
}
