// How deeply a JSON text nests, read without parsing it: a body nested thousands of levels deep would
// overflow the stack of whatever walks it later (a 500), so it is refused before anything runs.

const OPEN_OBJECT = 0x7b // {
const OPEN_ARRAY = 0x5b // [
const CLOSE_OBJECT = 0x7d // }
const CLOSE_ARRAY = 0x5d // ]
const QUOTE = 0x22 // "
const BACKSLASH = 0x5c // \

/**
 * The deepest nesting of objects and arrays in `text` (`{}` is 1, `{"a":[1]}` is 2), or `limit + 1`
 * as soon as it passes `limit`. Brackets inside strings do not count. Works on any text: a form value
 * that is not JSON is read the same way.
 */
export function jsonDepth(text: string, limit = Infinity): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > deepest) {
        deepest = depth
        if (deepest > limit) return deepest
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--
  }
  return deepest
}
