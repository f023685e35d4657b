// Text → model windows, the same for training, evaluation and serving.
import { GloveSlice } from './glove.js'
import { encode, featuresOf, tokenize, windows, type FeatureConfig, type Window } from './tokenizer.js'

export class Encoder {
  constructor(
    readonly features: FeatureConfig,
    readonly glove?: GloveSlice,
  ) {}

  encode(text: string): Window[] {
    const glove = this.glove
    return encode(text, this.features, glove ? (tokens) => glove.mean(tokens) : undefined)
  }

  /**
   * The same windows with their words' vector rows instead of the mean vector: the served forward
   * pass folds the vectors into one number per row (forward.ts), so the mean is never built.
   */
  encodeRows(text: string): Window[] {
    const glove = this.glove
    return windows(tokenize(text), this.features).map((w) => ({ ids: featuresOf(w, this.features), rows: glove?.rowsOf(w) }))
  }

  /** A window with its mean vector (the TF.js graph's input), from rows when it was encoded with them. */
  withVector(window: Window): Window {
    return window.vector || !window.rows || !this.glove ? window : { ...window, vector: this.glove.meanOfRows(window.rows) }
  }
}
