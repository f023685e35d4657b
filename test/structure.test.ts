// Readable code by measure: no function in plugins/, lib/, resources/, classifier/ or the web app longer than 100 lines, no
// plugin body longer than 80, and the dispatcher a thin loop (docs/architecture.md). Demo data
// loaders are data, not code, and are left out.
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import t from 'tap'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

function sourceFiles(dir: string, extension: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name), extension) : entry.name.endsWith(extension) ? [join(dir, entry.name)] : [],
  )
}
const tsFiles = (dir: string) => sourceFiles(dir, '.ts')

interface Measured {
  file: string
  name: string
  lines: number
}

/** Every function-like node of a file with its length in lines (its body's first to last line). */
function functionsOf(file: string): Measured[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true)
  const found: Measured[] = []
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const name = (node as ts.FunctionDeclaration).name?.getText(source) ?? `(anonymous at line ${lineOf(node.getStart(source)) + 1})`
      found.push({ file, name, lines: lineOf(node.body.getEnd()) - lineOf(node.body.getStart(source)) + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

t.test('no function in plugins/, lib/, resources/, classifier/ or web/ is longer than 100 lines', async (t) => {
  const files = [...['plugins', 'lib', 'resources', 'classifier'].flatMap(tsFiles), ...sourceFiles('web', '.js')]
  const functions = files.flatMap(functionsOf)
  t.ok(functions.length > 900, `${functions.length} functions measured`)
  t.ok(files.filter((f) => f.startsWith('web/')).length > 40, 'the web app is measured')
  t.same(
    functions.filter((f) => f.lines > 100).map((f) => `${f.file} ${f.name}: ${f.lines} lines`),
    [],
  )
})

t.test('no plugin body is longer than 80 lines; the dispatcher is at most 150', async (t) => {
  for (const file of tsFiles('plugins')) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    // The plugin body: the function handed to fastify-plugin.
    const plugin = functionsOf(file).find((f) => new RegExp(`fp(?:<[^>]*>)?\\(\\s*(?:async )?function ${f.name}\\b`).test(text))
    t.ok(plugin, `${file} has a plugin body`)
    if (plugin) t.ok(plugin.lines <= 80, `${file}: ${plugin.name} is ${plugin.lines} lines`)
  }
  const dispatcher = readFileSync(join(ROOT, 'plugins', 'dispatcher.ts'), 'utf8').split('\n').length
  t.ok(dispatcher <= 150, `plugins/dispatcher.ts is ${dispatcher} lines`)
})

t.test('plugins/errors.ts imports nothing from another plugin', async (t) => {
  const text = readFileSync(join(ROOT, 'plugins', 'errors.ts'), 'utf8')
  t.same(
    [...text.matchAll(/from '\.\/([^']+)'/g)].map((m) => m[1]),
    [],
  )
})

t.test('each hook of a declaration says whether it wraps the generic step or replaces it', async (t) => {
  const source = readFileSync(join(ROOT, 'lib/api/resource.ts'), 'utf8')
  const hooks = source.slice(source.indexOf('export interface Hooks<'), source.indexOf('\n}\n', source.indexOf('export interface Hooks<')))
  const members = [...hooks.matchAll(/\/\*\*([\s\S]*?)\*\/\s*(?:\/\/[^\n]*\n\s*)?(\w+)\?:/g)]
  t.ok(members.length >= 10, `${members.length} hooks`)
  for (const [, doc, name] of members) t.match(doc.replace(/^\s*\*?\s*/, ''), /^(Wraps|Replaces) /, `${name}: wraps or replaces`)
})

t.test('hand-written routes read their query and body through lib/api/route-validation.ts: no plugin sets a validator of its own', async (t) => {
  const own = tsFiles('plugins').filter((file) => /validatorCompiler\s*:/.test(readFileSync(join(ROOT, file), 'utf8')))
  t.same(own, [], 'routeQuery, queryValidation, bodyValidation and typeboxValidation are the only validators')
})
