// Lexical knowledge inside the model: how profane a text's words are by the cuss package's ratings
// (0 = rarely profane … 2 = profane), read through the disguises users put on them. These numbers are
// an input of the network (model.ts), trained jointly with its learned features, so the model decides
// how much a listed word means next to everything else it sees.
//
// Words are looked up whole, never as substrings: "Scunthorpe", "assessment", "cockpit" and "classic"
// hold no listed word. Disguises read through: leetspeak and symbols inside a word (sh1t, a$$hole,
// b!tch), a `*` standing for a letter (f*ck), letters stretched (fuuuuck) or spaced out (f u c k,
// f.u.c.k). obscenity's matcher, which reads the same disguises, costs ~90 µs a text here, most of a
// /detect request's budget; these lookups cost a few microseconds.
import { cuss } from 'cuss'

/** Inputs of the lexicon branch, in order (tokenizer.json records the version). */
export const LEXICON_FEATURES = ['profane (rating 2)', 'maybe profane (rating 1)', 'log(1 + listed words)', 'disguised'] as const
export const LEXICON_VERSION = 1
export const LEXICON_SIZE = LEXICON_FEATURES.length

const LEET: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '@': 'a', $: 's', '!': 'i', '|': 'l', '+': 't' }
const VOWELS = ['u', 'a', 'i', 'o', 'e']

/** Listed words and phrases with a rating of at least 1. */
const rating = (phrase: string): number => {
  const r = Object.hasOwn(cuss, phrase) ? cuss[phrase] : undefined
  return typeof r === 'number' ? r : -1
}

/** Runs of 3+ single letters separated by spaces, dots, dashes or underscores, joined: "f u c k" → "fuck". */
const SPACED = /(?<![\p{L}\p{N}])(\p{L})(?:[ .\-_]+(\p{L})(?![\p{L}\p{N}])){2,}/gu
/** A word as users disguise it: letters, digits and the symbols that stand for letters. */
const WORD = /[\p{L}\p{N}$@!|*+']+/gu
/** A word that may be disguised: it holds a symbol or digit that stands for a letter, or a letter thrice. */
const DISGUISABLE = /[0134578@$!|*+]|(\p{L})\1\1/u
/** First words of the listed phrases of two words (a pair is looked up only after one of these). */
const PHRASE_STARTS = new Set(Object.keys(cuss).filter((k) => k.includes(' ')).map((k) => k.split(' ')[0]))

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

/** A word as written, and what it stands for: its listed spelling and rating, and whether it was disguised. */
interface Resolved {
  plain: string
  rating: number
  disguised: boolean
}

/** Symbols after a word that belong to the sentence, not to the word ("sh!t!" → "sh!t" and "!"). */
const TRAILING = /[!|+*]+$/

function resolve(word: string): Resolved {
  const own = rating(word)
  if (own >= 1) return { plain: word, rating: own, disguised: false }
  if (DISGUISABLE.test(word) && word !== '@user') {
    for (const candidate of [word, word.replace(TRAILING, '')]) {
      for (const reading of readings(candidate)) {
        const r = rating(reading)
        if (r >= 1) return { plain: reading + word.slice(candidate.length), rating: r, disguised: true }
      }
    }
  }
  return { plain: word, rating: own, disguised: false }
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
 * The text with disguised listed words written plainly (tokenizer.ts, after lower-casing): the model
 * then reads "f*ck", "sh1t" and "f u c k" as the words it learned. Only words that resolve to a
 * listed word change.
 */
export function deobfuscate(lower: string): string {
  const text = SPACED_HINT.test(lower) ? joinSpaced(lower).text : lower
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
    const plain = resolve(word).plain
    if (plain !== word) {
      out += text.slice(done, start) + plain
      done = end
    }
  }
  return done ? out + text.slice(done) : text
}

/** A character that may disguise a letter, or a letter thrice (where a disguised word may be). */
const CANDIDATE = /[0134578@$!|*+]|(\p{L})\1\1/gu
/** One character of a word as WORD reads it (letters are BMP or surrogate pairs; both test as one here). */
const WORD_CHAR = /[\p{L}\p{N}$@!|*+'\uD800-\uDFFF]/u
/** A cheap test before joinSpaced: single letters with separators between them. */
const SPACED_HINT = /(?:^|[^\p{L}\p{N}])\p{L}[ .\-_]/u

/** The lexicon inputs of a text (all windows of a text share them). */
export function lexiconFeatures(text: string): number[] {
  const lower = text.normalize('NFKC').toLowerCase().replace(/https?:\/\/\S+|@\w+/g, ' ')
  const { text: joined, joined: spaced } = joinSpaced(lower)
  let profane = 0
  let maybe = 0
  let listed = 0
  let disguised = spaced ? 1 : 0
  const words = joined.match(WORD) ?? []
  for (let i = 0; i < words.length; i++) {
    const word = resolve(words[i])
    const best = Math.max(word.rating, i + 1 < words.length && PHRASE_STARTS.has(words[i]) ? rating(`${words[i]} ${words[i + 1]}`) : -1)
    if (word.disguised && word.rating >= 1) disguised = 1
    if (best >= 2) profane = 1
    else if (best === 1) maybe = 1
    if (best >= 1) listed++
  }
  return [profane, maybe, Math.log1p(listed), disguised]
}
