// `npm start`: compiles only when a source changed since the last build, then runs the server from dist/.
import { buildIfStale } from './build.mjs'

try {
  buildIfStale()
} catch (error) {
  console.error(error.message)
  process.exit(1)
}
await import('../dist/server.js')
