// `npm run worker`: compiles only when a source changed since the last build, then works jobs from dist/.
import { runBuilt } from './build.mjs'

await runBuilt('worker.js')
