// The one tokenizer and featurizer of the detection model (detect.md §6.3), used unchanged by
// training, evaluation and serving. Pure and deterministic: no locale, no clock.

import { deobfuscate } from './disguises.js'

export const TOKENIZER_VERSION = 2

export interface FeatureConfig {
  /** Hashed feature space; ids are 1..buckets (0 is padding). */
  buckets: number
  wordNgrams: number[]
  charNgrams: number[]
  /** Window W in tokens and its stride (detect.md §4). */
  window: number
  stride: number
  /** Most features kept per window (longest windows are truncated deterministically). */
  maxFeatures: number
}

export const DEFAULT_FEATURES: FeatureConfig = {
  buckets: 1 << 17,
  wordNgrams: [1, 2],
  charNgrams: [3, 4, 5],
  window: 64,
  stride: 32,
  maxFeatures: 1024,
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" }

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (whole, name: string) => {
    const lower = name.toLowerCase()
    if (lower.startsWith('#x')) return safeCodePoint(parseInt(lower.slice(2), 16), whole)
    if (lower.startsWith('#')) return ENTITIES[lower] ?? safeCodePoint(parseInt(lower.slice(1), 10), whole)
    return ENTITIES[lower] ?? whole
  })
}

function safeCodePoint(code: number, fallback: string): string {
  return Number.isInteger(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : fallback
}

/**
 * Steps 1–5: NFKC, entities, quote artefacts, OLID `URL`, lower case, urls, handles, retweets; then
 * (version 2) disguised listed words written plainly (disguises.ts: "f*ck", "sh1t", "f u c k"), and
 * whether there was one.
 */
function normaliseText(text: string): { text: string; disguised: boolean } {
  // Each replacement runs only when its text can occur: most texts hold no entity, URL or handle,
  // and a substring test costs a fraction of a regular expression's pass.
  let s = text.normalize('NFKC')
  if (s.includes('&')) s = decodeEntities(s)
  if (s.includes('""')) s = s.replace(/""/g, '"')
  if (s.includes('URL')) s = s.replace(/\bURL\b/g, ' ')
  s = s.toLowerCase()
  if (s.includes('http') || s.includes('www.')) s = s.replace(/https?:\/\/\S+|www\.\S+/g, ' <url> ')
  if (s.includes('@')) s = s.replace(/@\w+/g, ' @user ')
  s = s.replace(/^\s*rt\s+/, '')
  return deobfuscate(s)
}

export const normalise = (text: string): string => normaliseText(text).text

// Words; <url>; @user; each emoji/pictograph alone; runs of one punctuation character; `#`.
const TOKEN = /<url>|@user|[\p{L}\p{N}_']+|\p{Extended_Pictographic}|([^\s\p{L}\p{N}_'])\1*/gu

/** The text's tokens, and whether a disguised listed word was written plainly in them. */
export function analyse(text: string): { tokens: string[]; disguised: boolean } {
  const { text: normal, disguised } = normaliseText(text)
  return { tokens: asciiTokens(normal) ?? normal.match(TOKEN) ?? [], disguised }
}

// ASCII: letters, digits, `_` and `'` make words; \s's six characters separate.
const WORD_ASCII = new Uint8Array(128).map((_, c) => (/[\p{L}\p{N}_']/u.test(String.fromCharCode(c)) ? 1 : 0))
const SPACE_ASCII = new Uint8Array(128).map((_, c) => (/\s/.test(String.fromCharCode(c)) ? 1 : 0))

/**
 * TOKEN's tokens of an all-ASCII text, read by character codes (most texts are ASCII, and this is a
 * third of the regular expression's time); undefined at the first other character, for TOKEN to read.
 */
export function asciiTokens(s: string): string[] | undefined {
  const tokens: string[] = []
  const n = s.length
  for (let i = 0; i < n; ) {
    const c = s.charCodeAt(i)
    if (c > 0x7f) return undefined
    if (SPACE_ASCII[c]) {
      i++
    } else if ((c === 0x3c && s.startsWith('<url>', i)) || (c === 0x40 && s.startsWith('@user', i))) {
      tokens.push(s.slice(i, i + 5))
      i += 5
    } else {
      // A word, or a run of one punctuation character.
      let j = i + 1
      if (WORD_ASCII[c]) {
        for (let d = s.charCodeAt(j); j < n && (d > 0x7f || WORD_ASCII[d]); d = s.charCodeAt(++j)) if (d > 0x7f) return undefined
      } else {
        while (j < n && s.charCodeAt(j) === c) j++
      }
      tokens.push(s.slice(i, j))
      i = j
    }
  }
  return tokens
}

export function tokenize(text: string): string[] {
  return analyse(text).tokens
}

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

/** One FNV-1a step per UTF-8 byte of code point `c` (a lone surrogate counts as U+FFFD, as in Buffer). */
function hashCodePoint(hash: number, c: number): number {
  if (c < 0x80) return Math.imul(hash ^ c, FNV_PRIME)
  if (c < 0x800) {
    hash = Math.imul(hash ^ (0xc0 | (c >> 6)), FNV_PRIME)
    return Math.imul(hash ^ (0x80 | (c & 0x3f)), FNV_PRIME)
  }
  if (c < 0x10000) {
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd
    hash = Math.imul(hash ^ (0xe0 | (c >> 12)), FNV_PRIME)
    hash = Math.imul(hash ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME)
    return Math.imul(hash ^ (0x80 | (c & 0x3f)), FNV_PRIME)
  }
  hash = Math.imul(hash ^ (0xf0 | (c >> 18)), FNV_PRIME)
  hash = Math.imul(hash ^ (0x80 | ((c >> 12) & 0x3f)), FNV_PRIME)
  hash = Math.imul(hash ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME)
  return Math.imul(hash ^ (0x80 | (c & 0x3f)), FNV_PRIME)
}

/** Continues an FNV-1a hash over the UTF-8 bytes of `text` (encoded inline: this is the hot path). */
function hashString(hash: number, text: string): number {
  for (let j = 0; j < text.length; j++) {
    const c = text.codePointAt(j)!
    if (c > 0xffff) j++
    hash = hashCodePoint(hash, c)
  }
  return hash
}

/** FNV-1a 32-bit over the UTF-8 bytes. */
export function fnv1a(text: string): number {
  return hashString(FNV_OFFSET, text) >>> 0
}

const WORD_PREFIX = [0, 1, 2, 3, 4].map((n) => hashString(FNV_OFFSET, `w${n}:`))
const CHAR_PREFIX = hashString(FNV_OFFSET, 'c:')
const SPACE = 0x20

const WORD_TOKEN = /^[\p{L}\p{N}_']+$/u
/** A word token (not <url>, @user, an emoji or punctuation); ASCII tokens are read by character codes. */
function isWord(token: string): boolean {
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i)
    if (c > 0x7f) return WORD_TOKEN.test(token)
    if (!WORD_ASCII[c]) return false
  }
  return token.length > 0
}

// Scratch space of featuresOf, reused across calls (featurisation is synchronous), grown on demand.
let codePoints = new Int32Array(64)
let grams = new Int32Array(64 * 5)
// seen[id] === call: the id was already added by this call (a Set per window cost more than the hashing).
let seen = new Uint32Array(0)
let call = 0

/**
 * Feature ids (1..buckets) of one window of tokens: word n-grams (`w<n>:<words joined by space>`) and
 * character n-grams of `<word>` (`c:<chars>`), each hashed with FNV-1a. Character n-grams of one start
 * position share their hash prefix, so each is extended rather than rehashed.
 */
export function featuresOf(tokens: string[], config: FeatureConfig = DEFAULT_FEATURES): number[] {
  const { buckets, maxFeatures } = config
  if (seen.length < buckets + 1) seen = new Uint32Array(buckets + 1)
  if (++call === 0xffffffff) {
    seen.fill(0)
    call = 1
  }
  const ids: number[] = []
  // id = (hash >>> 0) % buckets + 1. With buckets a power of two (2^17 here) that is the low bits,
  // and an AND of int32s instead of a floating-point modulo of an unsigned 32-bit value: a quarter of
  // featuresOf's time (bench/README.md, "Detection").
  const mask = (buckets & (buckets - 1)) === 0 ? buckets - 1 : -1
  const add = (hash: number) => {
    const id = (mask >= 0 ? hash & mask : (hash >>> 0) % buckets) + 1
    if (ids.length < maxFeatures && seen[id] !== call) {
      seen[id] = call
      ids.push(id)
    }
  }
  for (const n of config.wordNgrams) {
    for (let i = 0; i + n <= tokens.length; i++) {
      let hash = WORD_PREFIX[n] ?? hashString(FNV_OFFSET, `w${n}:`)
      for (let k = 0; k < n; k++) {
        if (k) hash = hashCodePoint(hash, SPACE)
        hash = hashString(hash, tokens[i + k])
      }
      add(hash)
    }
  }
  const orders = config.charNgrams
  if (!orders.length) return ids
  const longest = Math.max(...orders)
  for (const token of tokens) {
    if (!isWord(token)) continue
    // The code points of `<token>`, then grams[k * count + i] = the hash of the (k+1)-gram at i.
    const length = token.length + 2
    if (codePoints.length < length || grams.length < length * longest) {
      codePoints = new Int32Array(2 * length)
      grams = new Int32Array(2 * length * longest)
    }
    let count = 0
    codePoints[count++] = 0x3c // <
    for (let j = 0; j < token.length; j++) {
      const c = token.codePointAt(j)!
      if (c > 0xffff) j++
      codePoints[count++] = c
    }
    codePoints[count++] = 0x3e // >
    for (let i = 0; i < count; i++) {
      let hash = CHAR_PREFIX
      for (let k = 0; k < longest && i + k < count; k++) {
        hash = hashCodePoint(hash, codePoints[i + k])
        grams[k * count + i] = hash
      }
    }
    // Same order as n-by-n extraction: all 3-grams of the word, then 4-grams, then 5-grams.
    for (const n of orders) for (let i = 0; i + n <= count; i++) add(grams[(n - 1) * count + i])
  }
  return ids
}

/** Windows of W tokens, stride ⌈W/2⌉, the last aligned to the end (detect.md §4). */
export function windows(tokens: string[], config: FeatureConfig = DEFAULT_FEATURES): string[][] {
  const { window, stride } = config
  if (tokens.length <= window) return [tokens]
  const out: string[][] = []
  for (let start = 0; ; start += stride) {
    if (start + window >= tokens.length) {
      out.push(tokens.slice(tokens.length - window))
      break
    }
    out.push(tokens.slice(start, start + window))
  }
  return out
}

/**
 * What the model reads of one window (classifier/encoder.ts): hashed feature ids, the rows of the
 * window's words in the vector slice (the convolution's input, in order), and for the TF.js graph
 * their mean vector.
 */
export interface Window {
  ids: number[]
  vector?: Float32Array
  rows?: number[]
  /** The text's lexicon inputs (lexicon.ts), when the model reads them. */
  lexicon?: number[]
  /** Served windows: the text holds a strongly rated word, so it is held at the profanity floor (profanity.ts). */
  profane?: boolean
  /** Training only: 1 for an example labelled under HASOC's policy (served windows: 0). */
  policy?: number
}

/** A text → the feature ids of each of its windows. */
export function featurize(text: string, config: FeatureConfig = DEFAULT_FEATURES): number[][] {
  return windows(tokenize(text), config).map((w) => featuresOf(w, config))
}
