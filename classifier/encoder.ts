// Text → model windows, the same for training, evaluation and serving.
import type { GloveSlice } from './glove.js'
import { usesBag } from './model.js'
import { analyse, featuresOf, windows, type FeatureConfig, type Window } from './tokenizer.js'
import { lexiconInputs } from './lexicon.js'
import { strongProfanity } from './profanity.js'

export class Encoder {
  constructor(
    /**
     * The feature settings, `dim` = 0 when the model reads no feature bag (nothing to hash then), and
     * `lexicon` > 0 when it reads the text's lexicon inputs.
     */
    readonly features: FeatureConfig & { dim?: number; lexicon?: number },
    readonly glove?: GloveSlice,
  ) {}

  /** Training and evaluation: the windows with their feature ids, word rows and mean vector. */
  encode(text: string): Window[] {
    return this.encodeRows(text).map((w) => this.withVector(w))
  }

  /**
   * Training only: the windows of the text without the tokens `leaveOut` picks, and with the lexicon
   * inputs of the whole text.
   */
  encodeWithout(text: string, leaveOut: (token: string) => boolean): Window[] {
    return this.encodeRows(text, leaveOut).map((w) => this.withVector(w))
  }

  /**
   * The windows with their words' vector rows instead of the mean vector: the served forward pass
   * folds the vectors into one number per row (forward.ts), so the mean is never built.
   */
  encodeRows(text: string, leaveOut?: (token: string) => boolean): Window[] {
    const { glove, features } = this
    const bag = usesBag(features)
    const { tokens, disguised } = analyse(text)
    const lexicon = features.lexicon ? lexiconInputs(tokens, disguised) : undefined
    const profane = strongProfanity(tokens) !== undefined
    return windows(leaveOut ? tokens.filter((token) => !leaveOut(token)) : tokens, features).map((w) => ({
      ids: bag ? featuresOf(w, features) : [],
      rows: glove?.rowsOf(w),
      lexicon,
      profane,
    }))
  }

  /** A window with its mean vector (the TF.js graph's input), from rows when it was encoded with them. */
  withVector(window: Window): Window {
    return window.vector || !window.rows || !this.glove ? window : { ...window, vector: this.glove.meanOfRows(window.rows) }
  }
}
