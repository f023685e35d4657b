// A <details> used as a menu (Export, in the title bar and on each chart): it closes when the reader
// clicks or taps elsewhere, or presses Escape in it, as menus do; left open, it covered the controls
// below it (the campaign picker, on a phone) after the reader had moved on. The Share panel is not a
// menu: it holds a form, and it follows the view while the reader drills down with it open.
import { useEffect, useRef } from 'preact/hooks'

/** A ref for the menu's <details> element, closed on a press outside it or Escape inside it. */
export function useMenuDetails() {
  const ref = useRef(/** @type {HTMLDetailsElement | null} */ (null))
  useEffect(() => {
    /** @param {Event} event */
    const outside = (event) => {
      const menu = ref.current
      if (menu?.open && event.target instanceof Node && !menu.contains(event.target)) menu.open = false
    }
    /** @param {KeyboardEvent} event */
    const pressed = (event) => {
      const menu = ref.current
      if (event.key !== 'Escape' || !menu?.open || !(event.target instanceof Node) || !menu.contains(event.target)) return
      menu.open = false
      menu.querySelector('summary')?.focus()
    }
    document.addEventListener('pointerdown', outside)
    document.addEventListener('keydown', pressed)
    return () => {
      document.removeEventListener('pointerdown', outside)
      document.removeEventListener('keydown', pressed)
    }
  }, [])
  return ref
}
