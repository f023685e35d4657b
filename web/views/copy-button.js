// A button that copies a text shown once (a share link, a password link) and says so. Without a
// clipboard (an insecure origin, a refusal) it selects the text where it is shown, for Ctrl+C.
import { useEffect, useState } from 'preact/hooks'
import { html } from '../html.js'
import { t } from '../i18n.js'

/** Selects what `selector` shows: an input's value, or an element's text. */
function selectShown(selector) {
  const shown = document.querySelector(selector)
  if (shown instanceof HTMLInputElement) return shown.select()
  if (shown) window.getSelection()?.selectAllChildren(shown)
}

/** Copies `text`, shown in the page at `selector`. */
export function CopyButton({ text, selector }) {
  const [copied, setCopied] = useState(false)
  useEffect(() => setCopied(false), [text])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied(true)
    } catch {
      selectShown(selector)
    }
  }
  return html`<button type="button" class="secondary" onClick=${copy}>${t('Copy')}</button><span role="status">${copied ? t('Copied') : ''}</span>`
}
