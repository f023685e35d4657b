// Compiles the server into dist/ (`npm run build`), or only when a source changed since the last build
// (`buildIfStale`, what `npm start` does: the compile takes seconds, a check of file times milliseconds).
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync, writeFileSync, utimesSync } from 'node:fs'
import module, { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const STAMP = join(ROOT, 'dist', '.build-stamp')
// What tsconfig.build.json compiles, and the files that steer the compile.
const SOURCE_DIRS = ['lib', 'plugins', 'resources', 'schemas', 'cli', 'classifier']
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json']

function newestSource() {
  let newest = 0
  const visit = (path, recurse, extension = '.ts') => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const file = join(path, entry.name)
      if (entry.isDirectory()) {
        if (recurse) visit(file, true, extension)
      } else if (entry.name.endsWith(extension)) newest = Math.max(newest, statSync(file).mtimeMs)
    }
  }
  visit(ROOT, false)
  for (const dir of SOURCE_DIRS) visit(join(ROOT, dir), true)
  // The web app's modules the server imports (lib/export/web-modules.ts) are compiled with it.
  visit(join(ROOT, 'web'), true, '.js')
  for (const file of CONFIG_FILES) newest = Math.max(newest, statSync(join(ROOT, file)).mtimeMs)
  return newest
}

/** True when dist/ was built after every source's last change. */
export function buildIsCurrent() {
  return existsSync(STAMP) && statSync(STAMP).mtimeMs >= newestSource()
}

/**
 * TypeScript 7's compiler, a native program (installed as typescript-native, its binary in the platform's
 * package beside it). Run directly rather than through its node shim: a test runner's hooks in a parent
 * node process (tap's process tracking) would load that shim, an ES module, as CommonJS.
 */
export function nativeTsc() {
  const shim = createRequire(import.meta.url).resolve('typescript-native/package.json')
  const platform = createRequire(shim).resolve(`@typescript/typescript-${process.platform}-${process.arch}/package.json`)
  return join(dirname(platform), 'lib', process.platform === 'win32' ? 'tsc.exe' : 'tsc')
}

/** Runs the TypeScript compiler; the stamp carries the time the compile began (a later edit is newer). */
export function build() {
  const began = new Date()
  const result = spawnSync(nativeTsc(), ['-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' })
  if (result.status !== 0) throw new Error(`the TypeScript compile failed (exit ${result.status})`)
  writeFileSync(STAMP, '')
  utimesSync(STAMP, began, began)
}

export function buildIfStale(log = (line) => console.error(line)) {
  if (buildIsCurrent()) return false
  log('compiling the server into dist/ (sources changed since the last build)…')
  build()
  return true
}

/** `npm start`, `npm run worker` and `npm run cli`: compile if a source changed, then run `entry` of dist/. */
export async function runBuilt(entry) {
  try {
    buildIfStale()
  } catch (error) {
    console.error(error.message)
    process.exit(1)
  }
  // Node.js 22.1+ keeps V8's compiled code of the modules on disk (the system's temporary directory, or
  // NODE_COMPILE_CACHE): a start after the first skips compiling them. Node.js 20 has no such cache.
  module.enableCompileCache?.()
  await import(pathToFileURL(join(ROOT, 'dist', entry)).href)
}

// `--if-stale` (the benchmarks): a check of file times when nothing changed, instead of a compile of
// seconds before the benchmark can say anything.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    if (process.argv.includes('--if-stale')) buildIfStale()
    else build()
  } catch (error) {
    console.error(error.message)
    process.exit(1)
  }
}
