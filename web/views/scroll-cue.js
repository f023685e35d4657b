// A table wider than its box says so in words while a column is out of sight ("More columns: scroll
// the table sideways →"): the shadow of app.css alone hides under the tinted cells of traffic lights.
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { t } from '../i18n.js'

/** [a ref for the scrolling box (`given`, when the box has one already), whether columns are out of sight to its right]. */
export function useScrollCue(given) {
  const own = useRef(null)
  const ref = given ?? own
  const [more, setMore] = useState(false)
  useEffect(() => {
    const box = ref.current
    if (!(box instanceof HTMLElement)) return setMore(false)
    const check = () => setMore(box.scrollLeft + box.clientWidth < box.scrollWidth - 1)
    check()
    box.addEventListener('scroll', check, { passive: true })
    const resized = new ResizeObserver(check)
    resized.observe(box)
    if (box.firstElementChild) resized.observe(box.firstElementChild)
    return () => {
      box.removeEventListener('scroll', check)
      resized.disconnect()
    }
  })
  return [ref, more]
}

/** The words of the cue, shown while `more`. */
export const ScrollCue = ({ more }) => (more ? html`<p class="scroll-cue">${t('More columns: scroll the table sideways →')}</p>` : null)
