// `npm start`: compiles only when a source changed since the last build, then runs the server from dist/.
import { runBuilt } from './build.mjs'

await runBuilt('server.js')
