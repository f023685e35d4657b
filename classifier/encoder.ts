// Text → model windows, the same for training, evaluation and serving.
import { GloveSlice } from './glove.js'
import { encode, type FeatureConfig, type Window } from './tokenizer.js'

export class Encoder {
  constructor(
    readonly features: FeatureConfig,
    readonly glove?: GloveSlice,
  ) {}

  encode(text: string): Window[] {
    const glove = this.glove
    return encode(text, this.features, glove ? (tokens) => glove.mean(tokens) : undefined)
  }
}
