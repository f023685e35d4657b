// How a page reads from the API: `useRead`, the answer of a read made again when what it depends on
// changes. Answers can arrive out of order (a box ticked, then another; a page left): only the latest
// read's answer is kept.
import { useEffect, useState } from 'preact/hooks'

/**
 * The answer of `read()` as `{ value, error }`, read again when `deps` change; `initial` until the
 * first answer. `read` returns a promise, or undefined when there is nothing to read now (the last
 * answer stays). A failed read keeps the last value and says why in `error`.
 * @template T
 * @param {() => Promise<T> | undefined} read
 * @param {unknown[]} deps
 * @param {T} [initial]
 * @returns {{ value: T, error: Error | null }}
 */
export function useRead(read, deps, initial) {
  const [answer, setAnswer] = useState({ value: initial, error: null })
  useEffect(() => {
    const pending = read()
    if (!pending) return
    let latest = true
    pending.then(
      (value) => latest && setAnswer({ value, error: null }),
      (error) => latest && setAnswer((before) => ({ value: before.value, error })),
    )
    return () => {
      latest = false
    }
  }, deps)
  return answer
}
