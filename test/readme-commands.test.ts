// The README's shell commands, run as a person copying them runs them: each ```sh block is read from
// README.md when the test runs (an edit to the README is what is tested), split into commands as bash
// reads them (continued lines joined, comments dropped), and every command is either run here against
// a real server process started as an operator starts it (`node cli/start.mjs`, what `npm start` execs;
// its own temporary DATA_DIR, the demo data) and its answer checked, or named in SKIPPED below with the
// reason. A command the README gains that is neither fails the first test, so a documented command
// cannot go unnoticed; a rule that no longer meets a README command fails it too (the tables stay the
// README's). A rule knows a command by what it addresses (`curl … /api/v1/location/?…`, `npm run cli
// -- upload …`), not by its every character: an edited command still meets its rule, runs, and is
// judged by its answer.
//
// curl commands run through `bash --norc --noprofile -c` in a working directory of the test's, where
// `.data` is a link to the server's DATA_DIR (the README's commands read `.data/admin-api-key` and
// `.data/admin-password`, as in the project's root after `npm start`) and `my_campaign.csv` is written.
// A command is changed in two ways only, each said where it is done: the README's server address is
// the test server's (`onTestServer`), and the README's example ids (document 7, job 3) are the ids the
// earlier commands' answers gave (`withExample`). A shell variable a command sets (`KEY=…`) stays set
// for the later commands, in the blocks after its own too, as in the person's terminal.
// `npm run cli -- …` commands run the same way, in the project's root (npm runs the CLI there) with
// DATA_DIR naming the server's directory: the CLI then sends them to the running server.
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { tempDir } from './helper.js'
import { bash, type Command, commandsOf, killGroup, type Ran, running, shBlocks } from './sh-blocks.js'
import { api, ROOT, type Server, startServer, until200 } from './processes.js'

/** The README whose commands are run. */
const README = join(ROOT, 'README.md')
/** The server address the README's commands name, and the Origin header of its sign-out. */
const README_SERVER = 'http://127.0.0.1:3000'

// ---------------------------------------------------------------------------------------------------
// What is not run, and why. Each entry names the commands it covers; nothing else is skipped.

const SKIPPED: Array<{ match: RegExp; why: string }> = [
  // `npm install && npm start`: .ci/run installs the project and starts the server with `npm start` on
  // every Node line; this test starts the same program (`node cli/start.mjs`, which `npm start` execs)
  // on a free port, with a DATA_DIR of its own, instead of a second install and the fixed port 3000.
  { match: /^npm install && npm start$/, why: 'CI installs and starts the server itself; the test starts the same program on a port of its own' },
  // The suite's own commands (the quick start's `npm test` and the Tests section): CI runs them, and a
  // test that ran the suite would run itself.
  { match: /^npm test(?: \S+)?$/, why: 'the test suite itself, which CI runs' },
  { match: /^npm run test:(?:e2e|pg)$/, why: 'the test suite itself, which CI runs' },
  // `open <url>` starts a browser (macOS's open; on Debian, `open` is openvt). The page, and the JSON
  // the comment beside it names, are fetched from the test server instead (`insteadOfOpen`).
  { match: /^open http:\/\/127\.0\.0\.1:3000\/\S+$/, why: 'starts a browser: the page and its JSON are fetched instead' },
  // set-password reads the password from a prompt or stdin, which these runs do not give;
  // test/session.test.ts sets a password as the command does and signs in with it.
  { match: /^npm run cli -- set-password \S+$/, why: 'reads the password from a prompt (test/session.test.ts)' },
  // load-geo is refused while a server holds the data directory (the README says so: stop it first),
  // and needs a polygons file; test/cli.test.ts loads every format the README describes.
  { match: /^npm run cli -- load-geo \S+$/, why: 'refused while the server runs; test/cli.test.ts runs it' },
  // backup and restore: test/backup.test.ts runs both, through the running server and directly, and
  // compares every read after the restore with the read before it; a restore needs an empty DATA_DIR.
  { match: /^npm run cli -- (?:backup|restore) \S+$/, why: 'test/backup.test.ts runs them' },
  // migrate: every server start applies the migrations (the server of this test did), and
  // test/upgrade.test.ts starts today's server on a database of the first release.
  { match: /^npm run migrate$/, why: 'every start migrates; test/upgrade.test.ts upgrades a first-release database' },
]

// ---------------------------------------------------------------------------------------------------
// What is run, and what its answer must show

interface Context {
  server: Server
  /** The person's working directory: `.data` links to the server's DATA_DIR; my_campaign.csv is there. */
  work: string
  dataDir: string
  /** The variables the person's shell holds (`KEY`, `B64`), set by the commands that assign them. */
  shell: Record<string, string>
  /** The document the last upload made (README's example: 7). */
  documentId?: number
  /** The job the last `Prefer: respond-async` request started (README's example: 3). */
  jobId?: number
  /** The keys the CLI printed, by user, in order (`alice:<hex>`). */
  keys: Map<string, string[]>
  /** The demo's country: the synopsis's `<id>`. */
  countryId: number
}

interface Rule {
  match: RegExp
  run: (t: Test, command: string, context: Context) => Promise<void>
}

/** The campaign of the demo that starts in October 2016: the period of the README's DHIS2 example, and the uploads' campaign. */
const OCTOBER = (
  JSON.parse(readFileSync(join(ROOT, 'lib/engine/veridia.json'), 'utf8')) as { campaigns: Array<{ name: string; start_date: string }> }
).campaigns.find((campaign) => campaign.start_date.startsWith('2016-10'))!.name

/**
 * The upload section's `my_campaign.csv`: a campaign file in the demo's terms (its district codes and a
 * campaign's name, which the demo maps) with two indicator columns of its own, which nothing maps yet,
 * so `source_object_map/?is_mapped=0` has them to list.
 */
const MY_CAMPAIGN_CSV = `geocode,campaign,VACCINATED,MISSED\nVD11,${OCTOBER},990,42\nVD12,${OCTOBER},1010,22\n`

const RULES: Rule[] = [
  // Quick start, and the upload section: the superuser's key, from the file the first start wrote.
  { match: /^KEY=/, run: assigns('KEY', (value) => /^admin:[0-9a-f]{40}$/.test(value)) },
  {
    match: /^curl .*\/api\/v1\/location\/\?/,
    run: async (t, command, context) => {
      const answer = json(t, (await curl(command, context)).stdout) as List | undefined
      t.same(answer?.objects?.map((o) => o.location_code).sort(), ['VD1', 'VD2', 'VD3'], 'the three provinces under the country', { answer })
    },
  },
  {
    match: /^curl .*\/api\/v1\/campaign_datapoint\/\?/,
    run: async (t, command, context) => {
      const answer = json(t, (await curl(command, context)).stdout) as List | undefined
      const rows = answer?.objects ?? []
      // What the command's comment says it reads: indicator 4 ('Percent missed'), a campaign, per
      // province (the demo's three).
      const asked = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(command)?.[1])
      t.equal(asked('indicator__in'), 4, 'it asks for Percent missed, as its comment says')
      t.equal(rows.length, 3, 'a value per province', { answer })
      t.ok(
        rows.every(
          (row) =>
            row.indicator_id === asked('indicator__in') &&
            row.campaign_id === asked('campaign__in') &&
            typeof row.value === 'number' &&
            row.value > 0 &&
            row.value < 1,
        ),
        'Percent missed in that campaign: a ratio the engine calculated',
        { rows },
      )
    },
  },
  // Authentication: sign in with the cookie jar, who is signed in, sign out.
  {
    match: /^curl -c jar .*\/api\/v1\/session\/$/,
    run: async (t, command, context) => {
      const answer = json(t, (await curl(command, context)).stdout) as { username?: string; via?: string } | undefined
      t.match(answer, { username: 'admin', via: 'session' }, 'signed in as admin')
      t.ok(sessionCookie(context), 'the jar holds the rhizome_session cookie', { jar: readFileSync(join(context.work, 'jar'), 'utf8') })
    },
  },
  {
    match: /^curl -b jar (?!.*-X ).*\/api\/v1\/session\/$/,
    run: async (t, command, context) => {
      t.match(json(t, (await curl(command, context)).stdout), { username: 'admin', via: 'session' }, 'the jar’s session is admin’s')
    },
  },
  {
    match: /^curl -b jar .*-X DELETE .*\/api\/v1\/session\/$/,
    run: async (t, command, context) => {
      const ran = await curl(command, context)
      t.equal(ran.stdout, '', 'no error body: the sign-out was taken (a refused one, 403 CROSS_SITE_REFUSED, says so in JSON)')
      // curl -b reads the jar and does not write it: the cookie is still there, and no longer signs in.
      const after = await fetch(`${context.server.url}/api/v1/session/`, { headers: { cookie: `rhizome_session=${sessionCookie(context)}` } })
      t.equal(after.status, 204, 'the session cookie signs nobody in any more')
    },
  },
  // Background jobs: transform_upload with `Prefer: respond-async`, then the job until it ends.
  {
    match: /^curl .*-H 'Prefer: .*\/api\/v1\/transform_upload\/\?document_id=7$/,
    run: async (t, command, context) => {
      // The README shows the upload that makes a document only in a later section: when no command
      // has made one yet, the test uploads my_campaign.csv through the API, as that section does.
      context.documentId ??= await uploadThroughApi(context)
      // The README's example document, 7, is the document uploaded.
      const ran = await curl(withExample(command, 'document_id=7', `document_id=${context.documentId}`), context)
      const [head, body] = ran.stdout.split(/\r?\n\r?\n/, 2)
      t.match(head, /^HTTP\/1\.1 202 Accepted\r?$/m, '-i shows 202 Accepted', { stdout: ran.stdout, stderr: ran.stderr })
      const job = json(t, body ?? '') as { id?: number; kind?: string; state?: string; params?: unknown } | undefined
      t.match(job, { kind: 'transform_upload', params: { document_id: context.documentId } }, 'the job of that document')
      t.ok(['created', 'retry', 'active', 'completed'].includes(job?.state ?? ''), `state ${job?.state}`)
      t.match(head, new RegExp(`^location: /api/v1/job/${job?.id}/\\r?$`, 'mi'), 'Location names the job')
      context.jobId = job?.id
    },
  },
  {
    match: /^curl .*\/api\/v1\/job\/3\/$/,
    run: async (t, command, context) => {
      // The README's example job, 3, is the job the request above started. The command is run again,
      // as a person does, until the job has ended (a busy machine may take a while).
      if (context.jobId === undefined) {
        t.fail('no job was started by the command before')
        return
      }
      const asRun = withExample(command, '/job/3/', `/job/${context.jobId}/`)
      const deadline = Date.now() + 180_000
      let job: { state?: string; kind?: string; result?: { ingest_stats?: { submissions?: { created?: number } } } } | undefined
      for (;;) {
        job = json(t, (await curl(asRun, context)).stdout) as typeof job
        if (!job?.state || ['completed', 'failed', 'cancelled'].includes(job.state) || Date.now() > deadline) break
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
      t.match(job, { kind: 'transform_upload', state: 'completed' }, 'the job completed', { job })
      t.equal(job?.result?.ingest_stats?.submissions?.created, 2, 'its result is the document with ingest_stats: both rows written')
    },
  },
  // Uploading data: the file base64-encoded into a JSON upload, transformed, and the codes to map.
  {
    match: /^B64=/,
    run: assigns('B64', (value) => Buffer.from(value, 'base64').toString('utf8') === MY_CAMPAIGN_CSV),
  },
  {
    match: /^curl .*\/api\/v1\/document\/$/,
    run: async (t, command, context) => {
      const document = json(t, (await curl(command, context)).stdout) as { id?: number; file_header?: string[]; processed?: boolean } | undefined
      t.match(document, { file_header: ['geocode', 'campaign', 'VACCINATED', 'MISSED'], file_type: 'campaign', processed: false }, 'the file, stored')
      t.type(document?.id, 'number', 'its id, which the next commands name')
      context.documentId = document?.id
    },
  },
  {
    match: /^curl (?!.*Prefer: ).*\/api\/v1\/transform_upload\/\?document_id=7$/,
    run: async (t, command, context) => {
      // The README's example document, 7, is the one the upload above answered.
      const answer = json(t, (await curl(withExample(command, 'document_id=7', `document_id=${context.documentId}`), context)).stdout) as List | undefined
      const document = answer?.objects?.[0] as { id?: number; processed?: boolean; ingest_stats?: IngestStats } | undefined
      t.match(document, { id: context.documentId, processed: true }, 'the document, transformed')
      t.match(
        document?.ingest_stats,
        { submissions: { created: 2 }, rows: { processed: 2 }, unmapped: { indicator: { count: 2 } } },
        'ingest_stats: two rows, and the two indicator columns unmapped',
      )
    },
  },
  {
    match: /^curl .*\/api\/v1\/source_object_map\/\?document_id=7&is_mapped=0"?$/,
    run: async (t, command, context) => {
      // The README's example document, 7, is the one the upload above answered.
      const answer = json(t, (await curl(withExample(command, 'document_id=7', `document_id=${context.documentId}`), context)).stdout) as List | undefined
      t.same(
        answer?.objects?.map((o) => `${o.content_type} ${o.source_object_code} ${o.master_object_id}`).sort(),
        ['indicator MISSED -1', 'indicator VACCINATED -1'],
        'the codes to map: the file’s indicator columns',
      )
    },
  },
  // From and to DHIS2: a data value set for the data element MISSED.
  {
    match: /^curl .*-d '\{.*\}' .*\/api\/dataValueSets\b/,
    run: async (t, command, context) => {
      // The README's example names the data element by the code MISSED, which neither the demo nor a
      // README command maps (the upload section lists it among the codes to map): the test maps it to
      // "Children missed" through the API first, as a person does next (the web app's upload page asks
      // for it). Unmapped, the import answers WARNING, the value set aside with that reason.
      await mapCode(t, context, 'indicator', 'MISSED', 'Children missed')
      const payload = JSON.parse(/-d '(\{.*\})'/.exec(command)![1]) as {
        period: string
        orgUnit: string
        dataValues: Array<{ dataElement: string; value: string }>
      }
      const summary = json(t, (await curl(command, context)).stdout) as
        | { status?: string; response?: { responseType?: string; importCount?: Record<string, number>; conflicts?: unknown[] } }
        | undefined
      t.match(summary, { status: 'OK', response: { responseType: 'ImportSummary', conflicts: [] } }, 'DHIS2’s import summary, nothing set aside')
      const counts = summary?.response?.importCount ?? {}
      t.equal((counts.imported ?? 0) + (counts.updated ?? 0) + (counts.ignored ?? 0), payload.dataValues.length, 'every value counted', { counts })
      // The values are there, read back as DHIS2 reads them (the same codes and period).
      for (const { dataElement, value } of payload.dataValues) {
        const query = new URLSearchParams({ dataElement, orgUnit: payload.orgUnit, period: payload.period })
        const read = await fetch(`${context.server.url}/api/dataValueSets?${query}`, { headers: context.server.admin() })
        const set = (await read.json()) as { dataValues?: Array<{ value: string }> }
        t.same(
          set.dataValues?.map((v) => Number(v.value)),
          [Number(value)],
          `${dataElement} at ${payload.orgUnit} in ${payload.period} is ${value}`,
        )
      }
    },
  },
  // The command line, through the running server (DATA_DIR names its directory).
  {
    match: /^npm run cli -- create-user \S+/,
    run: async (t, command, context) => {
      const user = /create-user (\S+)/.exec(command)![1]
      const ran = await npmCli(t, command, context)
      t.equal(ran.code, 0, 'create-user succeeds', { stderr: ran.stderr })
      t.match(ran.stderr, `held by the server at ${context.server.url}: sending create-user there`, 'through the running server')
      const key = new RegExp(`^${user}:[0-9a-f]{40}$`, 'm').exec(ran.stdout)?.[0]
      t.ok(key, `it prints ${user}:<key>`, { stdout: ran.stdout })
      if (!key) return
      context.keys.set(user, [key])
      const read = await fetch(`${context.server.url}/api/v1/user/?username=${user}`, { headers: { authorization: `ApiKey ${key}` } })
      t.equal(read.status, 200, 'the key works')
      const made = (((await read.json()) as List).objects ?? [])[0] as { is_superuser?: boolean; email?: string } | undefined
      const superuser = / --superuser\b/.test(concrete(command, context))
      const email = / --email (\S+)/.exec(concrete(command, context))?.[1]
      t.equal(made?.is_superuser, superuser, `a ${superuser ? 'superuser' : 'user'}`)
      if (email) t.equal(made?.email, email, 'with the e-mail address given')
    },
  },
  {
    match: /^npm run cli -- create-key /,
    run: async (t, command, context) => {
      const user = /create-key (\S+)/.exec(command)![1]
      const ran = await npmCli(t, command, context)
      t.equal(ran.code, 0, 'create-key succeeds', { stderr: ran.stderr })
      const key = new RegExp(`^${user}:[0-9a-f]{40}$`, 'm').exec(ran.stdout)?.[0]
      t.ok(key && !context.keys.get(user)?.includes(key), `it prints a new ${user}:<key>`, { stdout: ran.stdout })
      if (key) context.keys.set(user, [...(context.keys.get(user) ?? []), key])
      const read = await fetch(`${context.server.url}/api/v1/user/`, { headers: { authorization: `ApiKey ${key}` } })
      t.equal(read.status, 200, 'the new key works')
    },
  },
  {
    match: /^npm run cli -- revoke-key \S+:<key>/,
    run: async (t, command, context) => {
      const user = /revoke-key (\S+):<key>/.exec(command)![1]
      const [revoked, ...others] = context.keys.get(user) ?? []
      const ran = await npmCli(t, command, context)
      t.equal(ran.code, 0, 'revoke-key succeeds', { stderr: ran.stderr })
      t.match(ran.stdout, /^1 key\(s\) revoked$/m, 'it says one key was revoked')
      const as = (key: string) => fetch(`${context.server.url}/api/v1/user/`, { headers: { authorization: `ApiKey ${key}` } }).then((r) => r.status)
      t.equal(await as(revoked), 401, 'the revoked key is refused on the next request')
      for (const key of others) t.equal(await as(key), 200, 'the user’s other key still works')
    },
  },
  {
    match: /^npm run cli -- (?:--help|-h)$/,
    run: async (t, command, context) => {
      const ran = await npmCli(t, command, context)
      t.equal(ran.code, 0, '--help exits 0', { stderr: ran.stderr })
      t.match(ran.stdout, /^Usage: npm run cli -- \[options\] \[command\]/m, 'the usage')
      // Every command the README's command-line block shows is one the help lists.
      const documented = readmeCommands()
        .map((c) => /^npm run cli -- ([a-z][\w-]*)/.exec(c.text)?.[1])
        .filter((name): name is string => !!name)
      for (const name of new Set(documented)) t.match(ran.stdout, new RegExp(`^\\s+${name}\\b`, 'm'), `the help lists ${name}`)
    },
  },
  {
    match: /^npm run cli -- upload /,
    run: async (t, command, context) => {
      const vaccinated = await idOf(context, 'indicator', 'Children vaccinated')
      // The synopsis's data.csv and mapping.csv (below, `concrete`): a row of the October campaign at
      // Coldwater, and its one indicator code (not my_campaign.csv's, which the upload section lists
      // unmapped later) mapped to Children vaccinated.
      writeFileSync(join(context.work, 'data.csv'), `geocode,campaign,DOSES\nVD13,${OCTOBER},1234\n`)
      writeFileSync(join(context.work, 'mapping.csv'), `content_type,source_object_code,master_object_id\nindicator,DOSES,${vaccinated}\n`)
      const ran = await npmCli(t, command, context)
      t.equal(ran.code, 0, 'upload succeeds', { stderr: ran.stderr })
      t.match(ran.stderr, `held by the server at ${context.server.url}: sending upload there`, 'through the running server')
      // With --map: the mappings applied, then the document's ingest_stats after refresh_master.
      if (/ --map /.test(concrete(command, context))) t.match(ran.stdout, /^1 mapping\(s\) applied$/m, 'the mapping file applied')
      const stats = json(t, ran.stdout.slice(ran.stdout.search(/^\{/m))) as { document_id?: number } | undefined
      t.type(stats?.document_id, 'number', 'it prints the ingest_stats of its document', { stdout: ran.stdout })
      const value = await api(context.server, `/campaign_datapoint/?indicator__in=${vaccinated}&location_id__in=${await idOf(context, 'location', 'VD13')}`)
      const rows = ((await value.json()) as List).objects
      t.ok(
        rows.some((row) => row.value === 1234),
        'the value is stored',
        { rows },
      )
    },
  },
  {
    match: /^npm run cli -- demo\b/,
    run: async (t, command, context) => {
      // The demo is loaded already, and the server holds the data directory: the command says so and
      // exits 1 without writing.
      const ran = await npmCli(t, command, context)
      t.equal(ran.code, 1, 'demo is refused while the server runs')
      t.match(
        ran.stderr,
        `demo cannot run while the server at ${context.server.url} holds the embedded database: stop the server first`,
        'it says why, and what to do',
      )
    },
  },
]

/**
 * A command as the tables match it: runs of blanks as one space (a continued line keeps the next line's
 * indentation, which bash reads as one word break). The command runs as written.
 */
const shape = (command: Command) => command.text.replace(/\s+/g, ' ')
const ruleOf = (command: Command) => RULES.find((rule) => rule.match.test(shape(command)))
const skipOf = (command: Command) => (ruleOf(command) ? undefined : SKIPPED.find((skip) => skip.match.test(shape(command))))

/** The README commands that meet no rule and no skip entry, and the rules and skip entries that meet no command. */
function classify(commands: Command[]) {
  return {
    unknown: commands.filter((command) => !ruleOf(command) && !skipOf(command)),
    unusedRules: RULES.filter((rule) => !commands.some((command) => ruleOf(command) === rule)),
    unusedSkips: SKIPPED.filter((skip) => !commands.some((command) => skipOf(command) === skip)),
  }
}

const readmeBlocks = () => shBlocks(readFileSync(README, 'utf8'))
const readmeCommands = () => readmeBlocks().flatMap((block) => block.commands)

// ---------------------------------------------------------------------------------------------------
// The changes made to a command, each of them

/** The README's server address, in a URL or an Origin header, is the test server's (a free port, not 3000). */
function onTestServer(command: string, context: Context): string {
  return command.replaceAll(README_SERVER, context.server.url)
}

/** An example id of the README (`document_id=7`, `/job/3/`) is the id an earlier command's answer gave. */
function withExample(command: string, example: string, actual: string): string {
  if (!command.includes(example)) throw new Error(`the README's example ${example} is no longer in: ${command}`)
  return command.replaceAll(example, actual)
}

/**
 * The command-line block is a synopsis: `[…]` is optional, `<…>` a value to fill in, `a|b` a choice.
 * Pasted as it stands, bash reads `<id>` as input from a file named `id` and `campaign|date` as a pipe
 * into date(1), so a line is made concrete by these substitutions and no others: every optional part
 * is given (its brackets dropped); `<id>` is the demo's country (its id); `<key>` is the key the
 * create-user above printed for that user; a choice is its first word; data.csv and mapping.csv are the
 * files the test wrote in its working directory, by their absolute paths (npm runs the CLI in the
 * project's root, where a relative name would be looked for).
 */
function concrete(command: string, context: Context): string {
  return command
    .replace(/\[(--[^\]]+)\]/g, '$1')
    .replaceAll('<id>', String(context.countryId))
    .replace(/(\S+):<key>/g, (_, user: string) => context.keys.get(user)?.[0] ?? `${user}:<key>`)
    .replace(/(?<=\s)([A-Za-z]+)(?:\|[A-Za-z]+)+(?=\s|$)/g, '$1')
    .replace(/(?<=\s)(data|mapping)\.csv(?=\s|$)/g, (name) => join(context.work, name))
}

// ---------------------------------------------------------------------------------------------------
// Running

type List = { objects: Array<Record<string, unknown>> }
type IngestStats = { submissions?: { created?: number }; unmapped?: { indicator?: { count?: number } } }

/**
 * A curl command (or an assignment) in the person's working directory, on the test server. The
 * environment is PATH, HOME (the working directory: no ~/.curlrc of the machine's) and the shell's
 * variables: no proxy settings of the machine's reach curl.
 */
function curl(command: string, context: Context, suffix = ''): Promise<Ran> {
  return bash(onTestServer(command, context) + suffix, context.work, { PATH: process.env.PATH, HOME: context.work, ...context.shell }, 60_000)
}

/** An `npm run cli -- …` command, made concrete (`concrete`), in the project's root with DATA_DIR the server's. */
async function npmCli(t: Test, command: string, context: Context): Promise<Ran> {
  const asRun = concrete(command, context)
  if (asRun !== command) t.comment(`run as: ${asRun}`)
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: context.dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' }
  delete env.RHIZOME_API_KEY
  // Three minutes: npm, and `npm run cli` compiles first if a source changed since the last build.
  return bash(asRun, ROOT, env, 180_000)
}

/** `NAME=…`: run as typed, then the value the shell now holds is kept for the later commands. */
function assigns(name: string, valid: (value: string) => boolean): Rule['run'] {
  return async (t, command, context) => {
    // The command runs as typed; the lines after it print the variable it set and exit with the
    // command's own status.
    const ran = await curl(command, context, `\nstatus=$?\nprintf '%s' "$${name}"\nexit $status`)
    t.equal(ran.code, 0, `${name}=… succeeds`, { stderr: ran.stderr })
    t.ok(valid(ran.stdout), `${name} holds what it should`, { value: ran.stdout.slice(0, 200) })
    context.shell[name] = ran.stdout
  }
}

function json(t: Test, text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    t.fail('the answer is JSON', { text: text.slice(0, 2000) })
    return undefined
  }
}

/** The rhizome_session cookie's value in the jar curl wrote. */
function sessionCookie(context: Context): string | undefined {
  const jar = readFileSync(join(context.work, 'jar'), 'utf8')
  return /\trhizome_session\t(\S+)$/m.exec(jar)?.[1]
}

async function idOf(context: Context, resource: 'indicator' | 'location', name: string): Promise<number> {
  const query = resource === 'indicator' ? `short_name=${encodeURIComponent(name)}` : `location_code=${encodeURIComponent(name)}`
  const found = ((await (await api(context.server, `/${resource}/?${query}`)).json()) as List).objects
  if (found.length !== 1) throw new Error(`${resource} ${name}: ${found.length} found`)
  return found[0].id as number
}

/** Maps a code to a row by name (`source_object_map`), as the web app's upload page does. */
async function mapCode(t: Test, context: Context, contentType: 'indicator', code: string, name: string) {
  const master_object_id = await idOf(context, contentType, name)
  // The list needs a document: the code as the last upload registered it, if it did.
  const query = `document_id=${context.documentId ?? 0}&content_type=${contentType}&source_object_code=${encodeURIComponent(code)}`
  const existing = ((await (await api(context.server, `/source_object_map/?${query}`)).json()) as List).objects?.[0]
  const answer = existing
    ? await api(context.server, `/source_object_map/${existing.id}/`, { method: 'PATCH', body: JSON.stringify({ master_object_id }) })
    : await api(context.server, '/source_object_map/', {
        method: 'POST',
        body: JSON.stringify({ content_type: contentType, source_object_code: code, master_object_id }),
      })
  t.ok(answer.ok, `the test mapped ${contentType} ${code} to ${name}`, { status: answer.status })
}

/** my_campaign.csv uploaded through the API as the README's upload section sends it (base64 in JSON). */
async function uploadThroughApi(context: Context): Promise<number> {
  const body = { docfile: Buffer.from(MY_CAMPAIGN_CSV).toString('base64'), doc_title: 'my_campaign.csv', file_type: 'campaign' }
  const answer = await api(context.server, '/document/', { method: 'POST', body: JSON.stringify(body) })
  if (answer.status !== 201) throw new Error(`the test's upload: ${answer.status} ${await answer.text()}`)
  return ((await answer.json()) as { id: number }).id
}

/** The skipped `open <url>`: the page it opens answers, and the JSON its comment names is OpenAPI's. */
async function insteadOfOpen(t: Test, command: string, context: Context) {
  const url = onTestServer(command, context).split(' ')[1]
  const page = await fetch(url)
  t.equal(page.status, 200, `${url} answers`)
  const document = (await (await fetch(`${url}/json`)).json()) as { openapi?: string }
  t.match(document.openapi, /^3\./, 'and its JSON is an OpenAPI document')
}

// ---------------------------------------------------------------------------------------------------

t.test('every sh command of the README is run by this test or skipped with its reason', async (t) => {
  // The reading itself, on a text with each case: quotes, an escaped quote, a `#` inside a word, a
  // continued line, a comment whose backslash continues nothing.
  const sample = String.raw`echo 'in # quotes' "and # \" here" a#b # a comment
curl -d x \
     http://h/ # a comment \
ls`
  t.same(
    commandsOf(sample, 1),
    [
      { text: String.raw`echo 'in # quotes' "and # \" here" a#b`, line: 1 },
      { text: 'curl -d x      http://h/', line: 2 },
      { text: 'ls', line: 4 },
    ],
    'commands read as bash reads them',
  )
  const blocks = readmeBlocks()
  t.ok(blocks.length >= 5 && blocks.every((b) => b.commands.length), 'the README’s sh blocks, each with commands', { blocks })
  const { unknown, unusedRules, unusedSkips } = classify(blocks.flatMap((b) => b.commands))
  t.same(
    unknown.map((c) => `README line ${c.line}: ${c.text}`),
    [],
    'a command neither run nor skipped: give it a rule in RULES (run, with what its answer must show) or a reason in SKIPPED',
  )
  t.same(
    [...unusedRules, ...unusedSkips].map((r) => String(r.match)),
    [],
    'a rule or skip that meets no README command any more: drop it, or follow the README’s new text',
  )
  for (const block of blocks)
    for (const command of block.commands) {
      const skip = skipOf(command)
      if (skip) t.comment(`skipped, README line ${command.line}: ${command.text} (${skip.why})`)
    }
})

t.test('the README’s commands, run against a server started as an operator starts it', async (t) => {
  t.teardown(() => running.forEach(killGroup))
  const dataDir = tempDir(t, 'rhizome-readme-data-')
  const work = tempDir(t, 'rhizome-readme-work-')
  // The README's commands are run from the project's root after `npm start`, where `.data` is its
  // DATA_DIR: here a link to the test server's.
  symlinkSync(dataDir, join(work, '.data'))
  writeFileSync(join(work, 'my_campaign.csv'), MY_CAMPAIGN_CSV)
  // ADMIN_API_KEY empty: the first start generates the superuser's key and password and writes them to
  // DATA_DIR/admin-api-key and admin-password, as a plain `npm start` does.
  const server = await startServer(t, { DATA_DIR: dataDir, DEMO_DATA: '1', ADMIN_API_KEY: '', DATABASE_URL: '' })
  await until200(server, '/health/ready')
  const context: Context = { server, work, dataDir, shell: {}, keys: new Map(), countryId: 0 }
  context.countryId = await idOf(context, 'location', 'VD')

  for (const block of readmeBlocks()) {
    await t.test(`README line ${block.line} (${block.heading})`, async (t) => {
      for (const command of block.commands) {
        const rule = ruleOf(command)
        if (!rule) {
          if (skipOf(command) && command.text.startsWith('open '))
            await t.test(`line ${command.line}, skipped: ${shape(command)}; instead`, (t) => insteadOfOpen(t, command.text, context))
          continue
        }
        await t.test(`line ${command.line}: ${shape(command).slice(0, 140)}`, async (t) => {
          // A curl command not addressed to the README's server would not be on the test server either.
          if (/^curl /.test(command.text)) t.ok(command.text.includes(README_SERVER), `it names ${README_SERVER}`)
          await rule.run(t, command.text, context)
        })
      }
    })
  }
})
