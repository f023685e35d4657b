// `npm install` / `npm ci` (the `prepare` script): compiles the server and makes the migrated embedded
// database template (lib/data/pglite-template.ts), so the first `npm start` neither compiles nor runs initdb.
// An install without the dev tools (`--omit=dev`) skips this: `npm start` compiles when it can.
import { createRequire } from 'node:module'
import { buildIfStale } from './build.mjs'

try {
  createRequire(import.meta.url).resolve('typescript-native/package.json')
} catch {
  console.error('prepare: TypeScript is not installed (production install?): nothing compiled')
  process.exit(0)
}
try {
  buildIfStale(() => {})
  const { ensureTemplate } = await import('../dist/lib/data/pglite-template.js')
  await ensureTemplate()
} catch (error) {
  // Installing must not fail for this: a first start then does the same work itself.
  console.error(`prepare: ${error.message}`)
}
