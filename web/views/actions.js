// A page's changes through the API: each runs from a form or a button, says what happened (or what
// went wrong) in a live message, and bumps `version` so the page reads its lists again. One message at
// a time on a page: a section's new message clears the others' (they do not pile up), and each can be
// dismissed.
import { useEffect, useState } from 'preact/hooks'
import { list } from '../api.js'
import { html } from '../html.js'
import { useRead } from './use-read.js'
import { t } from '../i18n.js'

/** The message setters of the sections drawn now: a new message clears the others'. */
const sections = new Set()
const NONE = { text: '', error: false }

/**
 * A section's message and its setter: a new message clears the other sections' messages.
 * @returns {[{ text: string, error: boolean }, (next: { text: string, error: boolean }) => void]}
 */
export function useSectionMessage() {
  const [message, setOwn] = useState(NONE)
  useEffect(() => {
    sections.add(setOwn)
    return () => {
      sections.delete(setOwn)
    }
  }, [])
  const setMessage = (next) => {
    if (next.text) for (const other of sections) if (other !== setOwn) other(NONE)
    setOwn(next)
  }
  return [message, setMessage]
}

/** `act(done, work)`: an event handler running `work(form data or null)`, then `after()`. */
export function useActions(after = async () => {}) {
  const [message, setMessage] = useSectionMessage()
  const [version, setVersion] = useState(0)
  const act = (done, work) => async (event) => {
    event.preventDefault()
    const form = event.target instanceof HTMLFormElement ? event.target : null
    try {
      await work(form ? new FormData(form) : null)
      form?.reset()
      // The page shows what was saved (the reloaded catalog) before it says so.
      await after()
      setMessage({ text: done, error: false })
      setVersion((v) => v + 1)
    } catch (e) {
      setMessage({ text: e.message, error: true })
    }
  }
  return { message, setMessage, version, act }
}

/** The message of the last change: announced politely when done, at once when it failed. */
export function ActionMessage({ message }) {
  const [dismissed, setDismissed] = useState(null)
  if (!message.text || dismissed === message) return null
  return html`<div class="action-message">
    <p class=${message.error ? 'error' : 'notice'} role=${message.error ? 'alert' : 'status'}>${message.text}</p>
    <button type="button" class="secondary dismiss" onClick=${() => setDismissed(message)}>${t('Dismiss')}</button>
  </div>`
}

/**
 * The rows at `path` (null: none), read again when `version` changes. Answers can arrive out of order
 * when another path is chosen meanwhile: only the latest path's is kept.
 */
export function useRows(path, version, onError) {
  const { value: rows, error } = useRead(() => (path === null ? undefined : list(path)), [path, version], [])
  useEffect(() => {
    if (error) onError(error)
  }, [error])
  return rows
}
