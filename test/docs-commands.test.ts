// The shell commands of docs/*.md, as a person copies them (test/readme-commands.test.ts does the
// README's). Each ```sh command is run here, or run by the test or script named beside it (which must
// exist and show the command's program), or skipped with its reason; a command the docs gain that is
// none of these fails the first test, and so does an entry that meets no command any more.
//
// Run here: docs/dhis2.md's round trip between two servers (the demo, and an empty one), every command
// of its block in one bash, as a terminal runs them, on two servers started as its first two lines
// start them; and operations.md's physical backup (pg_basebackup) of a PostgreSQL server of the
// test's own. A command is changed in one way only: the docs' addresses (127.0.0.1:3000 and :3001, a
// backup's /backups/) are the test's.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { tempDir } from './helper.js'
import { ROOT, startServer, until200 } from './processes.js'
import { bash, type Command, killGroup, running, shBlocks } from './sh-blocks.js'
import { missingPostgres, startPrimary } from './topology.js'

const DOCS = join(ROOT, 'docs')

interface DocCommand extends Command {
  file: string
}

/** Every ```sh command of docs/*.md, with its file. */
const docsCommands = (): DocCommand[] =>
  readdirSync(DOCS)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .flatMap((name) =>
      shBlocks(readFileSync(join(DOCS, name), 'utf8')).flatMap((block) => block.commands.map((command) => ({ ...command, file: `docs/${name}` }))),
    )

const shape = (command: Command) => command.text.replace(/\s+/g, ' ')

/** The docs/dhis2.md block this file runs whole: the one that starts two servers. */
const roundTripBlock = () => shBlocks(readFileSync(join(DOCS, 'dhis2.md'), 'utf8')).find((b) => b.commands.some((c) => /^npm start &$/.test(c.text)))

/** Run in this file: every command of the DHIS2 round trip's block, and the physical backup. */
const runHere = (command: DocCommand) =>
  (command.file === 'docs/dhis2.md' && (roundTripBlock()?.commands.some((c) => c.line === command.line) ?? false)) ||
  (command.file === 'docs/operations.md' && /^pg_basebackup --dbname "\$DATABASE_URL" --pgdata \/backups\//.test(shape(command)))

/** Run by another test or script: `by` names it, and its text must show `shows` (the same program and arguments). */
const ELSEWHERE: Array<{ match: RegExp; by: string; shows: RegExp }> = [
  { match: /^npm run cli -- (?:backup|restore) \/backups\/\S+$/, by: 'test/backup.test.ts', shows: /cli\(\['backup'.*cli\(\['restore'/s },
  { match: /^pg_dump --format=custom --file \S+ "\$DATABASE_URL"$/, by: 'test/backup.test.ts', shows: /run\('pg_dump', \['--format=custom', '--file'/ },
  {
    match: /^pg_restore --exit-on-error --no-owner --dbname \S+ \S+$/,
    by: 'test/backup.test.ts',
    shows: /run\('pg_restore', \['--exit-on-error', '--no-owner', '--dbname'/,
  },
  { match: /^DATABASE_URL=\S+ npm start$/, by: 'test/backup.test.ts', shows: /startServer\(t, \{ DATABASE_URL: target/ },
  { match: /^npm run cli -- upgrade-data-dir$/, by: 'test/upgrade.test.ts', shows: /cli\(\['upgrade-data-dir'\]/ },
  { match: /^npm start$/, by: 'test/upgrade.test.ts', shows: /upgrade-data-dir.*startServer\(t, env\)/s },
  // The local trial: each role on an address of its own, TLS and scram on (failover.test.ts runs it).
  {
    match: /^deploy\/auto-failover\.sh (?:monitor|node|role|uri) /,
    by: 'test/auto-failover.ts',
    shows: /role\(\['monitor'.*role\(\['node'.*\['role'.*\['uri'/s,
  },
  // The settings as a shell reads them before the role and uri steps.
  {
    match: /^set -a; \. \/etc\/pgaf\.env; set \+a; deploy\/auto-failover\.sh (?:role|uri) /,
    by: 'test/deploy-files.test.ts',
    shows: /set -a; \. "\$1"; set \+a/,
  },
  { match: /^podman build --format docker -t rhizome-api \.$/, by: 'deploy/container-check.sh', shows: /podman build .*--format docker/s },
]

/** Not run by any test, and why. */
const SKIPPED: Array<{ match: RegExp; why: string }> = [
  {
    match: /^createdb rhizome_restored$/,
    why: 'test/backup.test.ts restores into an empty database it makes with `create database`, as createdb does, under a name of its own',
  },
  {
    match: /^(?:podman run -d -p 3000:3000 -v rhizome-data:\/data rhizome-api|POSTGRES_PASSWORD=\S+ podman compose -f deploy\/compose\.yaml up -d)$/,
    why: 'starting a container needs CAP_SYS_RESOURCE, which CI’s sandbox withholds: deploy/container-check.sh runs the image’s command, user and environment by chroot instead',
  },
  {
    match: /^(?:mkdir -p \/srv\/pgaf && chown postgres \/srv\/pgaf|install -m 600 -o postgres deploy\/pgaf\.env\.example \/etc\/pgaf\.env)$/,
    why: 'root on a machine of its own (the script’s refusal without them, and the file as systemd and bash read it: test/deploy-files.test.ts)',
  },
  {
    match: /^(?:cp deploy\/systemd\/\S+ \S+ \/etc\/systemd\/system\/ && systemctl daemon-reload|systemctl enable --now pgaf-(?:monitor|node))$/,
    why: 'needs systemd as PID 1, which neither CI nor this machine has (the units’ settings: test/deploy-files.test.ts)',
  },
]

const kindOf = (command: DocCommand) => {
  const text = shape(command)
  if (runHere(command)) return 'here'
  return ELSEWHERE.find((entry) => entry.match.test(text)) ?? SKIPPED.find((entry) => entry.match.test(text))
}

t.test('every sh command of docs/ is run here or by a named test or script, or skipped with its reason', async (t) => {
  const commands = docsCommands()
  t.ok(commands.length >= 30, `the docs’ commands (${commands.length})`)
  t.same(
    commands.filter((command) => !kindOf(command)).map((c) => `${c.file} line ${c.line}: ${shape(c)}`),
    [],
    'a command neither run nor skipped: run it here, name the test that runs it in ELSEWHERE, or give a reason in SKIPPED',
  )
  t.ok(roundTripBlock(), 'docs/dhis2.md holds the round trip’s block, which this file runs')
  t.ok(
    commands.some((command) => command.file === 'docs/operations.md' && runHere(command) && /^pg_basebackup/.test(command.text)),
    'docs/operations.md holds the pg_basebackup this file runs',
  )
  const unused = [...ELSEWHERE.map((e) => e.match), ...SKIPPED.map((e) => e.match)].filter((match) => !commands.some((command) => match.test(shape(command))))
  t.same(unused.map(String), [], 'an entry that meets no command of the docs any more: drop it, or follow the docs’ new text')
  for (const entry of ELSEWHERE) {
    const text = existsSync(join(ROOT, entry.by)) ? readFileSync(join(ROOT, entry.by), 'utf8') : ''
    t.match(text, entry.shows, `${entry.by} runs ${entry.match}`)
  }
  for (const command of commands) {
    const kind = kindOf(command)
    if (kind && kind !== 'here') t.comment(`${command.file} line ${command.line}: ${'by' in kind ? `run by ${kind.by}` : `skipped (${kind.why})`}`)
  }
})

const MARK = '@@command '

t.test('docs/dhis2.md: the round trip between two servers, as pasted', async (t) => {
  const block = roundTripBlock()
  if (!block) return t.fail('docs/dhis2.md has no block starting two servers')
  const [first, second, ...rest] = block.commands
  t.match(first.text, /^npm start &$/, 'it starts the demo')
  t.match(second.text, /^DATA_DIR=\.data\/dhis2-target DEMO_DATA=0 PORT=3001 npm start &$/, 'then an empty server')
  // The two lines' servers, started as `npm start` starts them (node cli/start.mjs), in a working
  // directory whose .data is the first one's DATA_DIR, on free ports.
  const work = tempDir(t, 'rhizome-docs-dhis2-')
  const demo = await startServer(t, { DATA_DIR: join(work, '.data'), DEMO_DATA: '1', ADMIN_API_KEY: '', DATABASE_URL: '' })
  await until200(demo, '/health/ready')
  mkdirSync(join(work, '.data', 'dhis2-target'))
  const target = await startServer(t, { DATA_DIR: join(work, '.data', 'dhis2-target'), DEMO_DATA: '0', ADMIN_API_KEY: '', DATABASE_URL: '' })
  await until200(target, '/health/ready')

  const onTestServers = (text: string) => text.replaceAll('http://127.0.0.1:3000', demo.url).replaceAll('http://127.0.0.1:3001', target.url)
  // A marker on a line of its own before each command (curl's answers end without a newline).
  const script = rest.map((command, i) => `printf '\\n${MARK}${i}\\n'\n${onTestServers(command.text)}`).join('\n')
  t.teardown(() => running.forEach(killGroup))
  const ran = await bash(script, work, { PATH: process.env.PATH, HOME: work }, 300_000)
  t.equal(ran.code, 0, 'the block runs to its end', { stderr: ran.stderr })
  const outputs = ran.stdout.split(new RegExp(`\\n${MARK}\\d+\\n`)).slice(1)
  t.equal(outputs.length, rest.length, 'an output per command')
  const answerOf = (pattern: RegExp) => {
    const i = rest.findIndex((command) => pattern.test(shape(command)))
    try {
      return JSON.parse(outputs[i] ?? '')
    } catch {
      return { notJson: outputs[i] }
    }
  }
  t.match(answerOf(/--data-binary @metadata\.json/), { status: 'OK', stats: { created: Number } }, '1. the tree and the data elements created')
  t.match(answerOf(/-d "\{\\"name\\":\\"October 2016\\"/), { name: 'October 2016', start_date: '2016-10-01' }, '2. the campaign made')
  const adx = readFileSync(join(work, 'october.xml'), 'utf8')
  t.match(adx, /<adx[\s>]/, '3. the demo’s October out as ADX')
  const october = answerOf(/--data-binary @october\.xml/)
  t.match(october, { status: 'OK', response: { importCount: { imported: Number } } }, '3. … and in')
  t.ok(october.response?.importCount?.imported > 0, `${october.response?.importCount?.imported} values imported`)
  t.match(answerOf(/-X PATCH .*resource_name/), { resource_name: 'date' }, '4. polio cases declared dated in the target')
  t.match(
    answerOf(/--data-binary @polio\.json/),
    { status: 'OK', response: { importCount: { imported: 36 } } },
    '4. the year’s 36 polio values in, as the docs say',
  )

  // The target now answers what the demo answers, value for value.
  const valueSet = async (server: typeof demo, query: string) => {
    const res = await fetch(`${server.url}/api/dataValueSets?${query}`, { headers: server.admin() })
    const body = (await res.json()) as { dataValues?: Array<Record<string, string>> }
    return (body.dataValues ?? []).map((v) => `${v.dataElement} ${v.period} ${v.orgUnit} ${v.value}`).sort()
  }
  for (const query of [
    'dataElement=Children%20missed&dataElement=Children%20vaccinated&orgUnit=VD&children=true&period=201610',
    'dataElement=Polio%20cases&orgUnit=VD&children=true&period=2016',
  ]) {
    const [there, here] = [await valueSet(demo, query), await valueSet(target, query)]
    t.ok(there.length > 0, `the demo answers ${query} (${there.length} values)`)
    t.same(here, there, `the target answers the same values for ${query}`)
  }
})

t.test('docs/operations.md: the physical backup of a PostgreSQL server, as pasted', { skip: missingPostgres() }, async (t) => {
  const command = docsCommands().find((c) => /^pg_basebackup /.test(c.text))
  if (!command) return t.fail('docs/operations.md has no pg_basebackup command')
  const primary = await startPrimary(t)
  const backups = tempDir(t, 'rhizome-docs-backups-')
  const ran = await bash(command.text.replaceAll('/backups/', `${backups}/`), backups, { PATH: process.env.PATH, DATABASE_URL: primary.url }, 120_000)
  t.equal(ran.code, 0, 'pg_basebackup ran', { stderr: ran.stderr })
  const made = readdirSync(backups).find((name) => name.startsWith('base-'))
  t.ok(made, 'the backup’s directory')
  t.same(readdirSync(join(backups, made ?? '')).sort(), ['backup_manifest', 'base.tar.gz', 'pg_wal.tar.gz'], 'the cluster and its WAL, as gzipped tars')
})
