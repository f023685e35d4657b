// The app in two languages: every string the app shows goes through the catalog (web/i18n.js, its keys
// in web/locales/fr.js). This test reads the app's sources (and the server's exports, lib/export) with
// TypeScript's parser and fails on text in a template that is not a `t(…)`, on a sentence in a string
// that is not one either, on a key the French catalog lacks and on a French entry nothing uses. Then
// it checks numbers, periods and words in French through the same modules the browser runs.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { ROOT } from './helper.js'

const jsFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? jsFiles(join(dir, entry.name)) : /\.(js|ts)$/.test(entry.name) ? [join(dir, entry.name)] : [],
  )

/** Where the app's words are: its views and modules, and the server's drawing of exports. */
// (The rest of lib/export is the API's, which speaks English: parameters' help and error messages.)
const SOURCES = [
  ...jsFiles('web').filter((f) => !f.startsWith(join('web', 'locales')) && f !== join('web', 'i18n.js')),
  join('lib', 'export', 'dashboard-file.ts'),
  join('lib', 'export', 'render.ts'),
]
/** Attributes a person reads (or hears). */
const READ_ATTRIBUTES = /\b(aria-label|title|placeholder|alt|label|legend|noneLabel|summary)="([^"]*)"/g
const LETTERS = /\p{L}{2,}/u
/**
 * A string that reads as words: two words, or a capitalised word (not an identifier in CamelCase, a
 * constant, a unit or a file type).
 */
const isWords = (text: string) =>
  LETTERS.test(text) && (/\p{L}\s+\p{L}/u.test(text) || /^\p{Lu}\p{Ll}+[.…:!?]?$/u.test(text)) && !/^[\w-]+(\.[\w-]+)+$/.test(text)
/** Strings that are no words to translate, each with why. */
const NOT_WORDS = new Set([
  'DejaVu Sans', // a font's name
  "'DejaVu Sans', system-ui, sans-serif", // a font stack
  'system-ui, sans-serif', // a font stack
  'Feature', // GeoJSON's type of a feature
  'main h1', // a CSS selector
  'rhizome', // the product's name
  'Enter', // a key's name (KeyboardEvent.key)
  'Escape', // a key's name
  'Shift', // the modifier keys' names
  'Control',
  'Alt',
  'Meta',
])

interface Found {
  keys: Array<{ key: string; where: string }>
  untranslated: string[]
}

/** The keys of `t`/`tn` calls and the text outside them, in one file. */
function scan(file: string): Found {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS)
  const found: Found = { keys: [], untranslated: [] }
  const where = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
  const isCatalogCall = (node: ts.Node) => {
    if (!ts.isCallExpression(node)) return false
    const callee = node.expression
    const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : ''
    return name === 't' || name === 'tn'
  }
  const visit = (node: ts.Node, inCatalogCall: boolean) => {
    if (isCatalogCall(node)) {
      const call = node as ts.CallExpression
      const name = ts.isIdentifier(call.expression) ? call.expression.text : (call.expression as ts.PropertyAccessExpression).name.text
      const literals = name === 't' ? call.arguments.slice(0, 1) : call.arguments.slice(1, 3)
      for (const literal of literals) {
        if (ts.isStringLiteral(literal) || ts.isNoSubstitutionTemplateLiteral(literal)) found.keys.push({ key: literal.text, where: where(literal) })
        else found.untranslated.push(`${where(literal)}: a key that is not a literal string`)
      }
      // The values filled in are code; a string among them is still checked.
      for (const argument of call.arguments.slice(name === 't' ? 1 : 3)) visit(argument, false)
      return
    }
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === 'html') {
      const template = node.template
      const parts = ts.isNoSubstitutionTemplateLiteral(template) ? [template.text] : [template.head.text, ...template.templateSpans.map((s) => s.literal.text)]
      // The template's text with a mark where each value goes: attributes read, then the text between tags.
      const whole = parts.join('\u0000')
      for (const [, attribute, value] of whole.matchAll(READ_ATTRIBUTES))
        if (LETTERS.test(value)) found.untranslated.push(`${where(node)}: ${attribute}="${value}"`)
      for (const chunk of whole.replace(/<[^>]*>/g, '\u0000').split('\u0000'))
        if (LETTERS.test(chunk) && !NOT_WORDS.has(chunk.trim())) found.untranslated.push(`${where(node)}: “${chunk.trim().slice(0, 60)}”`)
      if (!ts.isNoSubstitutionTemplateLiteral(template)) for (const span of template.templateSpans) visit(span.expression, false)
      return
    }
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && !inCatalogCall) {
      const parent = node.parent
      const isKey = (ts.isPropertyAssignment(parent) && parent.name === node) || ts.isElementAccessExpression(parent)
      if (!isKey && isWords(node.text) && !NOT_WORDS.has(node.text)) found.untranslated.push(`${where(node)}: '${node.text.slice(0, 60)}'`)
    }
    if (ts.isTemplateExpression(node) && !inCatalogCall) {
      const text = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ')
      // Markup (an SVG drawn on the server) holds its words in values, which are checked where made.
      const words = /\p{Lu}\p{Ll}+/u.test(text) || /\p{L}{2,}\s+\p{L}{2,}/u.test(text)
      if (!text.startsWith('<') && words) found.untranslated.push(`${where(node)}: \`${text.slice(0, 60)}\``)
    }
    ts.forEachChild(node, (child) => visit(child, inCatalogCall))
  }
  visit(source, false)
  return found
}

t.test('every string of the app is in the catalog, and every entry is used', async (t) => {
  const { FRENCH } = (await import('../web/locales/fr.js')) as { FRENCH: Record<string, string> }
  const results = SOURCES.map((file) => scan(file))
  const untranslated = results.flatMap((r) => r.untranslated)
  t.same(untranslated, [], 'no text outside the catalog (wrap it in t(…))')
  const keys = results.flatMap((r) => r.keys)
  t.ok(keys.length > 200, `${keys.length} strings through the catalog`)
  t.same(
    keys.filter((k) => !Object.hasOwn(FRENCH, k.key)).map((k) => `${k.where}: ${k.key}`),
    [],
    'every key has its French',
  )
  const used = new Set(keys.map((k) => k.key))
  t.same(
    Object.keys(FRENCH).filter((key) => !used.has(key)),
    [],
    'every French entry is used',
  )
  // The French fills only placeholders the English has (it may leave one out: a plural the language does not make).
  const holes = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
  t.same(
    Object.entries(FRENCH)
      .filter(([en, fr]) => holes(fr).some((hole) => !holes(en).includes(hole)))
      .map(([en]) => en),
    [],
    'no placeholder the English lacks',
  )
  // One apostrophe throughout: the sign-in form said "Nom d'utilisateur" and its refusal "Nom d’utilisateur".
  t.same(
    Object.values(FRENCH).filter((fr) => fr.includes("'")),
    [],
    'French writes the typographic apostrophe (’)',
  )
  t.ok(relative(ROOT, join(ROOT, 'web')), 'web/ read')
})

t.test('French through the modules the browser runs: words, percents, periods, plurals', async (t) => {
  // The modules as the server's exports load them, each call in the language of its drawing.
  const { drawingLanguage, webModules } = await import('../lib/export/web-modules.js')
  const { t: words, tn, formatValue } = await webModules()
  const format = await import('../web/format.js')
  const inFrench = <T>(work: () => T) => drawingLanguage.run('fr', work)
  t.equal(
    inFrench(() => words('Sign in')),
    'Se connecter',
  )
  // A test speaking French for a while (web-modules, upload-template) puts the exports' source back:
  // it used to leave English for every later file of its worker.
  const { useLanguage } = await import('../web/i18n.js')
  useLanguage(() => 'fr')()
  t.equal(
    inFrench(() => words('Sign in')),
    'Se connecter',
    'after another source of the language came and went',
  )
  t.equal(words('Sign in'), 'Sign in', 'and English outside a drawing')
  t.equal(
    inFrench(() => formatValue(0.0438, 'pct')),
    '4,38 %',
  )
  t.equal(
    inFrench(() => formatValue(12345, 'int')),
    '12\u202f345',
    'French thousands: a narrow no-break space',
  )
  t.equal(
    inFrench(() => tn(1, '{n} row', '{n} rows')),
    '1 ligne',
  )
  t.equal(
    inFrench(() => tn(0, '{n} row', '{n} rows')),
    '0 ligne',
    'zero is singular in French',
  )
  t.equal(
    inFrench(() => tn(2, '{n} row', '{n} rows')),
    '2 lignes',
  )
  t.equal(
    inFrench(() => words('{types} of {place}', { types: 'Districts', place: 'Eastvale' })),
    'Districts d’Eastvale',
    'de elided before a vowel',
  )
  t.equal(
    inFrench(() => words('{types} of {place}', { types: 'Districts', place: 'Northmarch' })),
    'Districts de Northmarch',
    'and only there',
  )
  t.equal(words('Sign in'), 'Sign in', 'English outside a drawing')
  t.equal(formatValue(0.0438, 'pct'), '4.38 %')
  t.equal(tn(0, '{n} row', '{n} rows'), '0 rows')
  t.equal(
    drawingLanguage.run('de', () => words('Sign in')),
    'Sign in',
    'a language the app does not speak: English',
  )
  t.ok(format, 'web/format.js loads in node')
  const { EXPORT_LANGUAGES } = await import('../lib/export/file.js')
  const { LANGUAGES } = await webModules()
  t.same(EXPORT_LANGUAGES, Object.keys(LANGUAGES), 'exports take the languages the app speaks')
})
