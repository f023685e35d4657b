// Lexical knowledge inside the model: how profane a text's words are by the cuss package's ratings,
// read through the disguises users put on them (disguises.ts). These numbers are an input of the
// network (model.ts), trained jointly with its learned features, so the model decides how much a
// listed word means next to everything else it sees. They are computed from the tokens the tokenizer
// already made (one pass over the text for both).
import { PHRASE_STARTS, rating } from './disguises.js'
import { analyse } from './tokenizer.js'

/** Inputs of the lexicon branch, in order (tokenizer.json records the version). */
export const LEXICON_FEATURES = ['profane (rating 2)', 'maybe profane (rating 1)', 'log(1 + listed words)', 'disguised'] as const
export const LEXICON_VERSION = 2
export const LEXICON_SIZE = LEXICON_FEATURES.length

/** The lexicon inputs of a text's tokens (all windows of a text share them); `disguised`: the tokenizer undid a disguise. */
export function lexiconInputs(tokens: string[], disguised: boolean): number[] {
  let profane = 0
  let maybe = 0
  let listed = 0
  for (let i = 0; i < tokens.length; i++) {
    const word = rating(tokens[i])
    const best = i + 1 < tokens.length && PHRASE_STARTS.has(tokens[i]) ? Math.max(word, rating(`${tokens[i]} ${tokens[i + 1]}`)) : word
    if (best >= 2) profane = 1
    else if (best === 1) maybe = 1
    if (best >= 1) listed++
  }
  return [profane, maybe, Math.log1p(listed), disguised ? 1 : 0]
}

/** The lexicon inputs of a text. */
export function lexiconFeatures(text: string): number[] {
  const { tokens, disguised } = analyse(text)
  return lexiconInputs(tokens, disguised)
}
