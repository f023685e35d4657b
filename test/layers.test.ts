// The layout of lib/ is a promise (docs/architecture.md, "Layers"): no import cycle anywhere, and
// imports go one way, api → engine and ingest → data → core. This test holds the code to it.
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseCircular, parseDependencyTree } from 'dpdm'
import t from 'tap'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** What each folder may import, besides itself (schemas/ is the tables' definitions). */
const ALLOWED: Record<string, string[]> = {
  'lib/core': [],
  'lib/data': ['lib/core', 'schemas'],
  'lib/engine': ['lib/core', 'lib/data', 'lib/ingest', 'schemas'],
  'lib/ingest': ['lib/core', 'lib/data', 'lib/engine', 'schemas'],
  'lib/api': ['lib/core', 'lib/data', 'lib/engine', 'lib/ingest', 'schemas'],
  schemas: ['lib/data'],
}

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [])
}

const layerOf = (file: string) => Object.keys(ALLOWED).find((layer) => file === layer || file.startsWith(`${layer}/`))

t.test('no import cycle, type imports included (dpdm)', async (t) => {
  const entries = ['app.ts', 'server.ts', 'cli/index.ts', 'classifier/train.ts', 'classifier/eval.ts', ...tsFiles('lib'), ...tsFiles('resources')]
  const tree = await parseDependencyTree(entries, { context: ROOT, transform: false, skipDynamicImports: false })
  const files = Object.keys(tree).filter((f) => !f.includes('node_modules'))
  t.ok(files.length > 100, `${files.length} modules read`)
  t.same(parseCircular(tree), [], 'no cycle')
})

t.test('imports go one way between the layers of lib/', async (t) => {
  let imports = 0
  for (const file of [...tsFiles('lib'), ...tsFiles('schemas')]) {
    const layer = layerOf(file)!
    t.ok(layer, `${file} lies in a layer`)
    for (const [, spec] of readFileSync(join(ROOT, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = relative(ROOT, normalize(join(dirname(join(ROOT, file)), spec)))
      const targetLayer = layerOf(target)
      imports++
      if (targetLayer === layer) continue
      if (!targetLayer || !ALLOWED[layer].includes(targetLayer)) t.fail(`${file} imports ${target}: ${layer} may import ${ALLOWED[layer].join(', ') || 'nothing else'}`)
    }
  }
  t.ok(imports > 150, `${imports} relative imports checked`)
})
