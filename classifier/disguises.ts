// Disguised profanity read as the words it stands for, by the cuss package's ratings (0 = rarely
// profane … 2 = profane; only words rated 1 or more are listed here). The tokenizer (version 2) writes
// disguised listed words plainly, so the model and its lexicon inputs (lexicon.ts) read "f*ck",
// "sh1t" and "f u c k" as the words they learned.
//
// Words are looked up whole, never as substrings: "Scunthorpe", "assessment", "cockpit" and "classic"
// hold no listed word. Disguises read through: leetspeak and symbols inside a word (sh1t, a$$hole,
// b!tch), a `*` standing for a letter (f*ck), letters stretched (fuuuuck) or spaced out (f u c k,
// f.u.c.k). obscenity's matcher, which reads the same disguises, costs ~90 µs a text here, most of a
// /detect request's budget; these lookups cost a few microseconds.
import { cuss } from 'cuss'

const LEET: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '@': 'a', $: 's', '!': 'i', '|': 'l', '+': 't' }
const VOWELS = ['u', 'a', 'i', 'o', 'e']

/** Listed words and phrases with a rating of at least 1 (a Map: cuss's object is a slow dictionary). */
const RATINGS = new Map(Object.entries(cuss).filter(([, r]) => typeof r === 'number' && r >= 1))
export const rating = (phrase: string): number => RATINGS.get(phrase) ?? -1

/** Whether a plain word (as the tokenizer writes it, disguises undone) is a listed word. */
export const isListed = (word: string): boolean => RATINGS.has(word)

/** Runs of 3+ single letters separated by spaces, dots, dashes or underscores, joined: "f u c k" → "fuck". */
const SPACED = /(?<![\p{L}\p{N}])(\p{L})(?:[ .\-_]+(\p{L})(?![\p{L}\p{N}])){2,}/gu
/** A word that may be disguised: it holds a symbol or digit that stands for a letter, or a letter thrice. */
const DISGUISABLE = /[0134578@$!|*+]|(\p{L})\1\1/u
/** First words of the listed phrases of two words (a pair is looked up only after one of these). */
export const PHRASE_STARTS = new Set([...RATINGS.keys()].filter((k) => k.includes(' ')).map((k) => k.split(' ')[0]))

/** The spellings a disguised word may stand for: leetspeak undone, `*` as each vowel, stretching undone. */
function readings(word: string): string[] {
  const plain = word.replace(/[0134578@$!|+]/g, (c) => LEET[c] ?? c).replace(/'/g, '')
  const starred = plain.includes('*') ? VOWELS.map((v) => plain.replace(/\*+/g, v)) : [plain]
  const out = new Set<string>()
  for (const s of starred) {
    out.add(s)
    out.add(s.replace(/(\p{L})\1{2,}/gu, '$1')) // fuuuuck → fuck
    out.add(s.replace(/(\p{L})\1{2,}/gu, '$1$1')) // looooser → looser, baaad → baad
  }
  return [...out]
}

/** Symbols after a word that belong to the sentence, not to the word ("sh!t!" → "sh!t" and "!"). */
const TRAILING = /[!|+*]+$/

/** The listed word a disguised word stands for, with any trailing symbols kept; else the word itself. */
function resolve(word: string): string {
  if (rating(word) >= 1 || !DISGUISABLE.test(word)) return word
  for (const candidate of [word, word.replace(TRAILING, '')]) {
    for (const reading of readings(candidate)) if (rating(reading) >= 1) return reading + word.slice(candidate.length)
  }
  return word
}

/** Spaced-out letters joined when they spell a listed word ("f u c k" → "fuck"). */
function joinSpaced(lower: string): { text: string; joined: boolean } {
  let joined = false
  const text = lower.replace(SPACED, (run) => {
    const word = run.replace(/[ .\-_]+/g, '')
    if (rating(word) < 1) return run
    joined = true
    return ` ${word} `
  })
  return { text, joined }
}

/**
 * The text with disguised listed words written plainly (tokenizer.ts, after lower-casing), and whether
 * there was one: the model then reads "f*ck", "sh1t" and "f u c k" as the words it learned. Only
 * words that resolve to a listed word change.
 */
export function deobfuscate(lower: string): { text: string; disguised: boolean } {
  const { text, joined } = SPACED_HINT.test(lower) ? joinSpaced(lower) : { text: lower, joined: false }
  // Only the words around a disguising character are looked at; most texts have none but handles.
  CANDIDATE.lastIndex = 0
  let out = ''
  let done = 0
  for (let hit = CANDIDATE.exec(text); hit; hit = CANDIDATE.exec(text)) {
    let start = hit.index
    let end = hit.index + hit[0].length
    while (start > done && WORD_CHAR.test(text[start - 1])) start--
    while (end < text.length && WORD_CHAR.test(text[end])) end++
    const word = text.slice(start, end)
    CANDIDATE.lastIndex = end
    if (word === '@user') continue
    const plain = resolve(word)
    if (plain !== word) {
      out += text.slice(done, start) + plain
      done = end
    }
  }
  return { text: done ? out + text.slice(done) : text, disguised: joined || done > 0 }
}

/** A character that may disguise a letter, or a letter thrice (where a disguised word may be). */
const CANDIDATE = /[0134578@$!|*+]|(\p{L})\1\1/gu
/** One character of a disguisable word (letters are BMP or surrogate pairs; both test as one here). */
const WORD_CHAR = /[\p{L}\p{N}$@!|*+'\uD800-\uDFFF]/u
/**
 * A cheap test before joinSpaced, true wherever SPACED can match: a single letter, separators, a
 * letter, a separator ("a b c" needs "a b "; one-letter words like "a" and "i" alone do not pass).
 */
const SPACED_HINT = /(?:^|[^\p{L}\p{N}])\p{L}[ .\-_]+\p{L}[ .\-_]/u
