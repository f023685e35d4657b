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
 * lib/dhis2 speaks DHIS2's formats over the upload pipeline; lib/api is the generic machinery of every
 * resource; lib/datapoints, the datapoint reads, sits on it.
 */
const LAYERS = [
  'lib/core',
  'schemas',
  'lib/data',
  'lib/engine',
  'lib/ingest',
  'lib/dhis2',
  'lib/api',
  'lib/datapoints',
  'web',
  'lib/export',
  'resources',
  'classifier',
  'plugins',
]
const ALLOWED: Record<string, string[]> = Object.fromEntries(LAYERS.map((layer, i) => [layer, LAYERS.slice(0, i)]))
// The detector depends on nothing of the data API.
ALLOWED.classifier = ['lib/core']
// The web app runs in the browser: it imports nothing of the server (the server's exports import its chart modules).
ALLOWED.web = []

function tsFiles(dir: string, extension = '.ts'): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name), extension) : entry.name.endsWith(extension) ? [join(dir, entry.name)] : [],
  )
}
/** A layer's source files: the web app's are JavaScript. */
const layerFiles = (layer: string) => (layer === 'web' ? tsFiles(layer, '.js') : tsFiles(layer))

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
  for (const file of LAYERS.flatMap(layerFiles)) {
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

t.test('a read made of other reads calls the read service: no request into the server from its own code', async (t) => {
  const sources = ['app.ts', 'server.ts', ...LAYERS.flatMap(layerFiles)]
  const injecting = sources.filter((file) => /\.inject\(/.test(readFileSync(join(ROOT, file), 'utf8')))
  t.same(injecting, [], 'no app.inject outside the tests')
  const identities = sources.filter((file) => /x-rhizome-inner/i.test(readFileSync(join(ROOT, file), 'utf8')))
  t.same(identities, [], 'no header carries an identity between reads')
  t.ok(sources.length > 150, `${sources.length} files read`)
})

t.test('a read made of other reads is a typed function call: a resource by name and its parameters, never a URL', async (t) => {
  const sources = ['app.ts', 'server.ts', ...LAYERS.filter((layer) => layer !== 'web').flatMap(layerFiles)]
  const text = (file: string) => readFileSync(join(ROOT, file), 'utf8')
  // The read service's old second router: paths matched by regexes, answers as text parsed again.
  const routers = sources.filter((file) => /readPath|answerPath|rawReader|bodyOf\(/.test(text(file)))
  t.same(routers, [], 'no path router, no reader of text')
  // A typed read named by a path (`reads.list('/campaign/')`) would be one again.
  const byPath = sources.filter((file) => /\.(list|detail|composed)\(\s*[`'"]\//.test(text(file)))
  t.same(byPath, [], 'every typed read names its resource, not a path')
})

t.test("the server reaches the web app's modules by imports this test reads, never by a computed path", async (t) => {
  const server = LAYERS.filter((layer) => layer !== 'web').flatMap(layerFiles)
  const computed = server.filter((file) => /\bimport\(\s*(?!['"])/.test(readFileSync(join(ROOT, file), 'utf8')))
  t.same(computed, [], 'every import() names its module')
  const webImports = server.filter((file) => /(?:from|import)\s*\(?\s*'(?:\.\.\/)+web\//.test(readFileSync(join(ROOT, file), 'utf8')))
  t.ok(webImports.includes('lib/export/web-modules.ts'), "the web app's chart modules are imported where this test sees them")
  t.same(webImports, ['lib/export/web-modules.ts'], 'only lib/export/web-modules.ts imports the web app')
})
