// The app's words in the reader's language: every string the app shows goes through `t` (or `tn` for a
// count), keyed by its English text; web/locales/fr.js gives the French. The language is the one the
// reader picked (remembered in this browser), else the browser's first that the app speaks, else
// English. The server's exports run in the language they are asked for (`useLanguage`).
import { FRENCH } from './locales/fr.js'

/** The languages the app speaks, each named in itself. */
export const LANGUAGES = { en: 'English', fr: 'Français' }

/** @type {Record<string, Record<string, string>>} */
const CATALOGS = { fr: FRENCH }
const STORED = 'rhizome-language'

/** @param {unknown} code @returns {code is keyof typeof LANGUAGES} */
const spoken = (code) => typeof code === 'string' && Object.hasOwn(LANGUAGES, code)

/** The page's language: picked, else the browser's, else English (English in Node). */
function pageLanguage() {
  if (typeof window === 'undefined') return 'en'
  const picked = window.localStorage?.getItem(STORED)
  if (spoken(picked)) return picked
  const browser = (navigator.languages ?? [navigator.language]).map((tag) => tag.slice(0, 2).toLowerCase()).find(spoken)
  return browser ?? 'en'
}

const atLoad = pageLanguage()
let current = () => atLoad

/** The language the app writes in now. @returns {string} */
export const language = () => current()

/**
 * Where the language comes from (the server's exports: the language of the request being drawn).
 * Returns what puts the source before it back: a test that speaks French for a while leaves the
 * process's exports their own source.
 * @param {() => string | undefined} source @returns {() => void}
 */
export function useLanguage(source) {
  const before = current
  const installed = () => {
    const code = source()
    return spoken(code) ? code : 'en'
  }
  current = installed
  // Only while it is still the source: a later one (the exports', imported meanwhile) stays.
  return () => {
    if (current === installed) current = before
  }
}

/** Keeps the reader's pick and reloads the page in it. @param {string} code */
export function pickLanguage(code) {
  window.localStorage.setItem(STORED, code)
  window.location.reload()
}

/**
 * `text` in the current language, `{name}` filled from `values`.
 * @param {string} text the English text, the catalog's key
 * @param {Record<string, string | number>} [values]
 */
export function t(text, values) {
  const code = current()
  let words = code === 'en' ? text : (CATALOGS[code]?.[text] ?? text)
  if (!values) return words
  // French elides "de" before a name that starts with a vowel: "Districts d’Eastvale", never "de Eastvale".
  if (code === 'fr') words = words.replace(/\bde \{(\w+)\}/g, (whole, name) => (ELIDED.test(String(values[name] ?? '')) ? `d’{${name}}` : whole))
  return words.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole))
}

/** A word French elides "de" before: one starting with a vowel (an "h" may be aspirated: left alone). */
const ELIDED = /^[aeiouyàâäéèêëîïôöûü]/i

/**
 * A count's words: `one` or `other` as the language's plural rules say for `count` (French says "1
 * ligne", "0 ligne"; English "0 rows"), `{n}` the count as given.
 * @param {number} count
 * @param {string} one
 * @param {string} other
 * @param {Record<string, string | number>} [values] with `n`, the count as written
 */
export function tn(count, one, other, values = {}) {
  const form = new Intl.PluralRules(current()).select(count)
  return t(form === 'one' ? one : other, { n: count, ...values })
}
