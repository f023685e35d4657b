// The layout is a promise (docs/architecture.md, "Layers"): no import cycle anywhere, and imports go
// one way, from plugins down to lib/core. This test holds the code to it.
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseCircular, parseDependencyTree } from 'dpdm'
import t from 'tap'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * The layers, lowest first: each may import only the layers before it, type imports included.
 * schemas/ holds the tables and their column DSL; classifier/ is the detector, beside the data API.
 * lib/api is the generic machinery of every resource; lib/datapoints, the datapoint reads, sits on it.
 */
const LAYERS = ['lib/core', 'schemas', 'lib/data', 'lib/engine', 'lib/ingest', 'lib/api', 'lib/datapoints', 'lib/export', 'resources', 'classifier', 'plugins']
const ALLOWED: Record<string, string[]> = Object.fromEntries(LAYERS.map((layer, i) => [layer, LAYERS.slice(0, i)]))
// The detector depends on nothing of the data API.
ALLOWED.classifier = ['lib/core']

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  )
}

const layerOf = (file: string) => Object.keys(ALLOWED).find((layer) => file === layer || file.startsWith(`${layer}/`))

t.test('no import cycle, type imports included (dpdm)', async (t) => {
  const entries = ['app.ts', 'server.ts', 'cli/index.ts', 'classifier/train.ts', 'classifier/eval.ts', ...tsFiles('lib'), ...tsFiles('resources')]
  const tree = await parseDependencyTree(entries, { context: ROOT, transform: false, skipDynamicImports: false })
  const files = Object.keys(tree).filter((f) => !f.includes('node_modules'))
  t.ok(files.length > 100, `${files.length} modules read`)
  t.same(parseCircular(tree), [], 'no cycle')
})

t.test('imports go one way between the layers', async (t) => {
  let imports = 0
  for (const file of LAYERS.flatMap((layer) => tsFiles(layer))) {
    const layer = layerOf(file)!
    t.ok(layer, `${file} lies in a layer`)
    for (const [, spec] of readFileSync(join(ROOT, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = relative(ROOT, normalize(join(dirname(join(ROOT, file)), spec)))
      const targetLayer = layerOf(target)
      imports++
      if (targetLayer === layer) continue
      if (!targetLayer || !ALLOWED[layer].includes(targetLayer))
        t.fail(`${file} imports ${target}: ${layer} may import ${ALLOWED[layer].join(', ') || 'nothing else'}`)
    }
  }
  t.ok(imports > 400, `${imports} relative imports checked`)
})

t.test('the generic API layer knows nothing of datapoints', async (t) => {
  const offending = tsFiles('lib/api').filter((file) => /from '\.\.\/datapoints\//.test(readFileSync(join(ROOT, file), 'utf8')))
  t.same(offending, [], 'no file of lib/api imports lib/datapoints')
  t.ok(tsFiles('lib/datapoints').length >= 4, 'the datapoint reads live in lib/datapoints')
})
