// The profanity floor. OLID's policy (TweetEval's, the training data's) counts any profanity as
// offensive, and a word list decides by it; a model that reads the rest of a text can talk itself
// out of a plain slur or curse (casual profanity, AAE spellings). So a text holding a word the lexicon
// rates strongly (cuss rating 2) is served at least PROFANITY_FLOOR, whatever the model says: never
// below what a word list decides. Words are read through the tokenizer's disguises (leetspeak,
// symbols, stretched or spaced letters) and the spellings cuss does not list: a dropped g (`fuckin'`,
// `fuckin`), a plural in z (`niggaz`). Whole words only: `Scunthorpe`, `assessment` stay clean.
import { PHRASE_STARTS, rating } from './disguises.js'
import { analyse } from './tokenizer.js'

/** cuss's rating of a profane word. */
export const STRONG_RATING = 2
/** The served offensive probability of a text with a strongly rated word, at least (above 0.5: offensive). */
export const PROFANITY_FLOOR = 0.75

/** A token and the spellings it may stand for. */
function spellings(token: string): string[] {
  const bare = token.replace(/'+$/, '')
  const forms = bare === token ? [token] : [token, bare]
  if (/in'?$/.test(token)) forms.push(bare.replace(/in$/, 'ing'))
  if (bare.length > 3 && bare.endsWith('z')) forms.push(`${bare.slice(0, -1)}s`)
  return forms
}

/** The first strongly rated word (or two-word phrase) of a text's tokens, if any. */
export function strongProfanity(tokens: string[]): string | undefined {
  for (let i = 0; i < tokens.length; i++) {
    for (const form of spellings(tokens[i])) if (rating(form) >= STRONG_RATING) return form
    if (i + 1 < tokens.length && PHRASE_STARTS.has(tokens[i])) {
      const phrase = `${tokens[i]} ${tokens[i + 1]}`
      if (rating(phrase) >= STRONG_RATING) return phrase
    }
  }
  return undefined
}

/** Whether a text holds a strongly rated word, read as the model reads it. */
export const holdsStrongProfanity = (text: string) => strongProfanity(analyse(text).tokens) !== undefined
