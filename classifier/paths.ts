import { join } from 'node:path'
import { PROJECT_ROOT } from '../lib/core/paths.js'

/** The committed model: model.json, weights.bin, tokenizer.json, metadata.json, metrics.json. */
export const MODEL_DIR = join(PROJECT_ROOT, 'classifier', 'model')
