// A page's changes through the API: each runs from a form or a button, says what happened (or what
// went wrong) in a live message, and bumps `version` so the page reads its lists again.
import { useEffect, useState } from 'preact/hooks'
import { list } from '../api.js'
import { html } from '../html.js'

/** `act(done, work)`: an event handler running `work(form data or null)`, then `after()`. */
export function useActions(after = async () => {}) {
  const [message, setMessage] = useState({ text: '', error: false })
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
  return message.text ? html`<p class=${message.error ? 'error' : 'notice'} role=${message.error ? 'alert' : 'status'}>${message.text}</p>` : null
}

/**
 * The rows at `path` (null: none), read again when `version` changes. Answers can arrive out of order
 * when another path is chosen meanwhile: only the latest path's is kept.
 */
export function useRows(path, version, onError) {
  const [rows, setRows] = useState([])
  useEffect(() => {
    if (path === null) return
    let latest = true
    list(path).then(
      (found) => latest && setRows(found),
      (e) => latest && onError(e),
    )
    return () => {
      latest = false
    }
  }, [path, version])
  return rows
}
