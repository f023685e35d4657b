// `npm run worker`: compiles only when a source changed since the last build, then works jobs from dist/.
import { buildIfStale } from './build.mjs'

try {
  buildIfStale()
} catch (error) {
  console.error(error.message)
  process.exit(1)
}
await import('../dist/worker.js')
