// The repository stands alone: every `§` reference in its code and documents resolves to a heading
// of docs/contract/, and so does every acceptance scenario and decision label it cites. How a
// reference names its file is docs/contract/README.md, "How references are written".
import { readFileSync, readdirSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const CONTRACT = 'docs/contract'
const SCANNED = new Set(['.ts', '.js', '.mjs', '.md', '.sql'])
const SKIPPED = new Set(['node_modules', 'dist', 'coverage', 'classifier/model'])
/** The path outside the repository the contract once lived in, spelt so that this file does not hold it. */
const OUTSIDE = ['shared', 'spec'].join('/')

/** A reference's name → its file under docs/contract/ (RFC sections are the RFCs'). */
const NAMES: Record<string, string | null> = {
  'resource-api': 'resource-api.md',
  ingestion: 'ingestion.md',
  detect: 'detect.md',
  acceptance: 'acceptance.md',
  'stack-notes': 'stack-notes.md',
  README: 'README.md',
  RFC: null,
}

/** The file a bare `§n` means when no named reference precedes it in its source file (in the contract, always its own file). */
function folderDefault(file: string): string {
  if (file.startsWith(`${CONTRACT}/`)) return file.slice(CONTRACT.length + 1)
  if (/^(lib\/ingest|lib\/engine|lib\/datapoints|bench)\//.test(file)) return 'ingestion.md'
  if (file.startsWith('classifier/')) return 'detect.md'
  return 'resource-api.md'
}

function sourceFiles(dir = ''): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir ? `${dir}/${entry.name}` : entry.name
    if (entry.isDirectory()) return entry.name.startsWith('.') || SKIPPED.has(entry.name) || SKIPPED.has(path) ? [] : sourceFiles(path)
    return SCANNED.has(extname(entry.name)) ? [path] : []
  })
}

/** The numbers of a contract file's headings: `## 11. Writes` → 11, `### 11.5 Delete` → 11.5, `### 71a.` → 71a, `## B.` → B. */
function headingsOf(file: string): Set<string> {
  const found = new Set<string>()
  for (const line of readFileSync(join(ROOT, CONTRACT, file), 'utf8').split('\n')) {
    const m = /^#{1,6}\s+(\d+[a-z]?(?:\.\d+)*|[A-Z])(?=[.\s–]|$)/.exec(line)
    if (m) found.add(m[1])
  }
  return found
}

interface Reference {
  at: string
  target: string
  section: string
}

const SECTION = /(?:\b(resource-api|ingestion|detect|acceptance|stack-notes|README|RFC \d+)(?:\.md)? )?§ ?(\d+[a-z]?(?:\.\d+)*)/g
const CONTINUES = /^[\s,;–-]*(?:and\s*)?$/

/** Every `§` reference of a source file with the contract file it means; RFC sections are left out. */
function sectionReferences(file: string, text: string): Reference[] {
  const found: Reference[] = []
  let named: string | undefined
  const inContract = file.startsWith(`${CONTRACT}/`)
  text.split('\n').forEach((line, index) => {
    let previous: { end: number; target: string | null } | undefined
    for (const m of line.matchAll(SECTION)) {
      const name = m[1]?.startsWith('RFC') ? 'RFC' : m[1]
      let target: string | null
      if (name) target = NAMES[name]
      else if (previous && CONTINUES.test(line.slice(previous.end, m.index))) target = previous.target
      else target = (inContract ? undefined : named) ?? folderDefault(file)
      if (name && target) named = target
      previous = { end: m.index + m[0].length, target }
      if (target) found.push({ at: `${file}:${index + 1}`, target, section: m[2] })
    }
  })
  return found
}

/** Acceptance scenarios cited by number or part: `acceptance.md 43`, `acceptance 71a`, `acceptance.md 34–39`, `acceptance.md B`. */
function scenarioReferences(file: string, text: string): Reference[] {
  const found: Reference[] = []
  text.split('\n').forEach((line, index) => {
    for (const cited of line.split(/\bacceptance(?:\.md)?(?: scenarios?)? /).slice(1)) {
      for (const token of cited.split(/(?:,\s*|–|\s+and\s+|\s+)/)) {
        const scenario = /^(?:(\d+[a-z]?)(?:\.\d+)?|([A-G]))[):;.]*$/.exec(token)
        if (!scenario) break
        found.push({ at: `${file}:${index + 1}`, target: 'acceptance.md', section: scenario[1] ?? scenario[2] })
      }
    }
  })
  return found
}

const files = sourceFiles().filter((file) => file !== 'test/contract-references.test.ts')
const texts = new Map(files.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]))
const headings = new Map(Object.values(NAMES).flatMap((file) => (file ? [[file, headingsOf(file)] as const] : [])))

t.test('every § reference resolves to a heading of docs/contract/', async (t) => {
  const references = files.flatMap((file) => sectionReferences(file, texts.get(file)!))
  t.ok(references.length > 100, `${references.length} references found`)
  const unresolved = references.filter((r) => !headings.get(r.target)!.has(r.section)).map((r) => `${r.at}: §${r.section} → ${CONTRACT}/${r.target}`)
  t.same(unresolved, [], 'each names a heading of the file it means')
})

t.test('every acceptance scenario cited is a heading of docs/contract/acceptance.md', async (t) => {
  const references = files.flatMap((file) => scenarioReferences(file, texts.get(file)!))
  t.ok(references.length > 50, `${references.length} scenarios cited`)
  const scenarios = headings.get('acceptance.md')!
  t.same(
    references.filter((r) => !scenarios.has(r.section)).map((r) => `${r.at}: scenario ${r.section}`),
    [],
  )
})

t.test('every decision label cited, as (D13), is in the contract index', async (t) => {
  const labels = new Set([...readFileSync(join(ROOT, CONTRACT, 'README.md'), 'utf8').matchAll(/^\| (D\d+) \|/gm)].map((m) => m[1]))
  const cited = files.flatMap((file) => [...texts.get(file)!.matchAll(/[(,] ?(D\d{1,2})\)/g)].map((m) => ({ file, label: m[1] })))
  t.ok(cited.length > 0)
  t.same(
    cited.filter((c) => !labels.has(c.label)).map((c) => `${c.file}: ${c.label}`),
    [],
  )
})

t.test('the rule that maps a bare § is the documented one', async (t) => {
  const at = (file: string, text: string) => sectionReferences(file, text).map((r) => `${r.target} ${r.section}`)
  t.same(at('lib/ingest/x.ts', '// §5.5'), ['ingestion.md 5.5'], 'the folder decides when nothing is named')
  t.same(at('lib/api/x.ts', '// §9'), ['resource-api.md 9'])
  t.same(at('classifier/x.ts', '// §6.4'), ['detect.md 6.4'])
  t.same(at('lib/api/x.ts', '// (ingestion §10): x\n/** §10.2 */'), ['ingestion.md 10', 'ingestion.md 10.2'], 'the nearest named one above')
  t.same(at('lib/x.ts', '// (resource-api §9, §10; ingestion §6–§7)'), ['resource-api.md 9', 'resource-api.md 10', 'ingestion.md 6', 'ingestion.md 7'])
  t.same(at('lib/x.ts', '// (RFC 9110 §8.8, §13): x §11'), ['resource-api.md 11'], "an RFC's sections are its own")
  t.same(
    scenarioReferences('test/x.ts', '// acceptance.md 46, 75, 74 and acceptance 71a; acceptance.md B 43–55 (x)').map((r) => r.section),
    ['46', '75', '74', '71a', 'B', '43', '55'],
  )
})

t.test(`no file of the repository points at ${OUTSIDE}`, async (t) => {
  t.same(
    files.filter((file) => texts.get(file)!.includes(OUTSIDE)),
    [],
    'the contract is docs/contract/',
  )
})
