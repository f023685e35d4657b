// Serving side of the model: load the committed files, score texts over sliding windows (max over
// windows), calibrate so the chosen threshold maps to 0.5, hold strongly profane text at the profanity
// floor (profanity.ts), and format the two decimal strings.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadModel, predictWindows, type InputShape } from './model.js'
import { TOKENIZER_VERSION, type FeatureConfig, type Window } from './tokenizer.js'
import { LEXICON_VERSION } from './lexicon.js'
import { Encoder } from './encoder.js'
import { GloveSlice } from './glove.js'
import type { tf } from './runtime.js'
import { SparseForward } from './forward.js'
import { PROFANITY_FLOOR } from './profanity.js'

export interface DetectionResult {
  'not-offensive': string
  offensive: string
}

export interface ModelFiles {
  features: FeatureConfig & InputShape
  threshold: number
}

/** log(p / (1 − p)), p kept inside [1e-7, 1 − 1e-7] so that 0 and 1 stay finite. */
export function logit(p: number): number {
  const clamped = Math.min(Math.max(p, 1e-7), 1 - 1e-7)
  return Math.log(clamped / (1 - clamped))
}

export class Detector {
  readonly encoder: Encoder
  private readonly forward: SparseForward

  constructor(
    readonly model: tf.LayersModel,
    readonly files: ModelFiles,
    glove?: GloveSlice,
  ) {
    this.encoder = new Encoder(files.features, glove)
    this.forward = new SparseForward(model, files.features, glove)
  }

  static async load(dir: string): Promise<Detector> {
    const features = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'))
    // Inputs computed differently from training give plausible, wrong scores: refuse them instead.
    if (features.version !== TOKENIZER_VERSION)
      throw new Error(
        `${dir} was trained on tokenizer version ${features.version}; this code tokenizes as version ${TOKENIZER_VERSION}: retrain (npm run train)`,
      )
    if (features.lexicon && features.lexicon_version !== LEXICON_VERSION)
      throw new Error(
        `${dir} was trained on lexicon inputs version ${features.lexicon_version}; this code computes version ${LEXICON_VERSION}: retrain (npm run train)`,
      )
    const { threshold } = JSON.parse(readFileSync(join(dir, 'metadata.json'), 'utf8'))
    const glove = features.glove ? GloveSlice.load(dir) : undefined
    const detector = new Detector(await loadModel(join(dir, 'model.json')), { features, threshold }, glove)
    detector.predictWithTf(detector.windowsOf('warm up')) // warm-up: the TF.js graph runs once, so the weights are valid
    detector.scoreWindows(detector.windowsOf('warm up'))
    return detector
  }

  /** The served windows: feature ids and word rows (the mean vector is folded away, forward.ts). */
  windowsOf(text: string): Window[] {
    return this.encoder.encodeRows(text)
  }

  /** The model's offensive probability of each window (one forward pass, float64, see forward.ts). */
  scoreWindows(windows: Window[]): Float32Array {
    return this.forward.predict(windows)
  }

  /** The same through TF.js (the training graph); used to check the served forward pass. */
  predictWithTf(windows: Window[]): Float32Array {
    return predictWindows(
      this.model,
      windows.map((w) => this.encoder.withVector(w)),
      this.files.features,
      this.encoder.glove,
    )
  }

  /** detect.md §6.4: p = σ(logit(p_model) − logit(t)), computed in float64. */
  calibrate(p: number): number {
    return 1 / (1 + Math.exp(-(logit(p) - logit(this.files.threshold))))
  }

  /**
   * A text's served probability from its windows and its best window's model probability: calibrated,
   * then never below the profanity floor when the text holds a strongly rated word (profanity.ts).
   */
  served(windows: Window[], p: number, floor = true): number {
    const calibrated = this.calibrate(p)
    return floor && windows[0]?.profane && calibrated < PROFANITY_FLOOR ? PROFANITY_FLOOR : calibrated
  }

  /** detect.md §2: both scores with 6 decimals, summing to exactly 1. */
  static format(p: number): DetectionResult {
    const o = Math.round(p * 1e6)
    return { 'not-offensive': ((1e6 - o) / 1e6).toFixed(6), offensive: (o / 1e6).toFixed(6) }
  }

  /** Scores texts directly (evaluation, tests) as /detect serves them; `floor: false` leaves the profanity floor out. */
  scoreTexts(texts: string[], { floor = true } = {}): number[] {
    const windows: Window[] = []
    const owner: number[] = []
    const first: Window[][] = []
    texts.forEach((text, i) => {
      const own = this.windowsOf(text)
      first.push(own.slice(0, 1))
      for (const w of own) windows.push(w), owner.push(i)
    })
    const best = new Array<number>(texts.length).fill(0)
    for (let start = 0; start < windows.length; start += 256) {
      this.scoreWindows(windows.slice(start, start + 256)).forEach((p, j) => {
        const i = owner[start + j]
        best[i] = Math.max(best[i], p)
      })
    }
    return best.map((p, i) => this.served(first[i], p, floor))
  }
}
