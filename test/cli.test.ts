// The command line as people expect one (`npm run cli -- …`, a process each): help on stdout with exit
// 0, misuse refused with exit 2 before anything is opened or sent, a server that is not there named
// with its URL and the cause, and load-geo's file in the format its help states.
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { runCommand } from '../cli/commands.js'
import { client } from './api.js'
import { ADMIN_KEY, build, tempDir } from './helper.js'
import { runRemote } from '../cli/remote.js'
import { cli } from './processes.js'
import { freePort } from './topology.js'

const env = { DATABASE_URL: '', LOG_LEVEL: 'warn' }

t.test('--help, -h and help <command> print usage on stdout and exit 0', async (t) => {
  for (const args of [['--help'], ['-h'], ['help']]) {
    const { code, stdout, stderr } = await cli(args, env)
    t.equal(code, 0, `${args.join(' ')}: ${stderr}`)
    t.match(stdout, /^Usage: npm run cli -- \[options\] \[command\]/m)
    t.match(stdout, /upload \[options\] <file>/)
    t.match(stdout, /Exit codes: 0 done, 1 failed/)
  }
  const upload = await cli(['help', 'upload'], env)
  t.equal(upload.code, 0)
  t.match(upload.stdout, /Usage: npm run cli -- upload \[options\] <file>/)
  t.match(upload.stdout, /--conflict <rule>.*\n.*choices: "last", "first", "reject"/)
  t.equal((await cli(['upload', '--help'], env)).code, 0)
})

t.test('misuse exits 2 naming what is wrong, before a database is opened or a request sent', async (t) => {
  const dir = tempDir(t)
  const file = join(dir, 'round.csv')
  writeFileSync(file, 'campaign,geocode,Vaccinated\nC1,VD11,5\n')
  // DATA_DIR that does not exist: a command that opened the database would create it.
  const unused = { ...env, DATA_DIR: join(dir, 'never-created') }
  const cases: [string[], RegExp][] = [
    [[], /^Usage: npm run cli --/m],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['--bogus'], /unknown option '--bogus'/],
    [['upload', file], /required option '--type <type>' not specified/],
    [['upload', file, '--type', 'campagne'], /argument 'campagne' is invalid\. Allowed choices are campaign, date/],
    [['upload', join(dir, 'absent.csv'), '--type', 'campaign'], /absent\.csv is not a readable file \(ENOENT\)/],
    [['upload', file, '--type', 'campaign', '--conflict', 'newest'], /Allowed choices are last, first, reject/],
    [['create-user', 'bob', '--location', 'Veridia'], /Veridia is not a location id/],
    [['--server', 'localhost:3000', 'migrate'], /localhost:3000 is not an http:\/\/ or https:\/\/ URL/],
  ]
  for (const [args, message] of cases) {
    const { code, stdout, stderr } = await cli(args, unused)
    t.equal(code, 2, `${args.join(' ')}: ${stderr}`)
    t.match(stderr, message)
    t.equal(stdout, '')
  }
  t.notOk(existsSync(unused.DATA_DIR), 'no database was opened')
})

t.test('a server that is not there: the URL and the cause', async (t) => {
  const port = await freePort()
  const { code, stderr } = await cli(['--server', `http://127.0.0.1:${port}`, '--key', `admin:${'d'.repeat(40)}`, 'create-key', 'alice'], env)
  t.equal(code, 1)
  t.match(stderr, `error: cannot reach the server at http://127.0.0.1:${port}: GET http://127.0.0.1:${port}/api/v1/user/?username=alice failed (ECONNREFUSED)`)
})

t.test('load-geo reads location_code|geo_json lines, JSON plain or CSV-quoted, with or without a header', async (t) => {
  const { app, db } = await build(t)
  const api = client(app)
  await api.post('/location_type/', { name: 'Country', admin_level: 0 })
  for (const code of ['R', 'S', 'T']) await api.post('/location/', { name: code, location_code: code, location_type_id: 1 })
  const lines: string[] = []
  const run = (text: string) => {
    const file = join(tempDir(t), 'geo.txt')
    writeFileSync(file, text)
    return runCommand(db, 'load-geo', file, {}, (l) => lines.push(l))
  }
  const square = '{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}'
  t.equal(await run(`R|${square}\nS|"${square.replaceAll('"', '""')}"\n`), 0, 'no header: plain JSON and CSV-quoted JSON')
  t.same(lines.splice(0), ['2 polygon(s) loaded'])
  t.equal(await run(`location_code|geo_json\nT|${square}\nNOPE|${square}\n`), 0, 'a header line')
  t.same(lines.splice(0), ['1 polygon(s) loaded', 'unknown location codes skipped: NOPE'])
  t.equal((await api.get('/geo/?location_id__in=1,2,3')).body.objects.length, 3)
  t.equal(await run(`NOPE|${square}\n`), 1, 'a file that loads nothing exits 1')
  t.same(lines.splice(0), ['0 polygon(s) loaded', 'unknown location codes skipped: NOPE'])
  await t.rejects(run(`R|${square}\nS,{"type":"Polygon"}\n`), { message: /line 2 is not location_code\|geo_json/ }, 'a line that is not the format is named')
})

t.test('create-user --location through a server: a location that is not there creates nobody', async (t) => {
  const { app, db } = await build(t)
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const run = (username: string, location: string) => runRemote(base, `admin:${ADMIN_KEY}`, 'create-user', username, { location }, () => {})
  await t.rejects(run('zed', '99999'), /GET \/location\/99999\/: 404/)
  t.equal(await db.selectFrom('auth_user').select('id').where('username', '=', 'zed').executeTakeFirst(), undefined, 'no user left behind')
  const { code, stderr } = await cli(['--server', base, '--key', `admin:${ADMIN_KEY}`, 'create-user', 'zed2', '--location', '9999999999'], env)
  t.equal(code, 2, 'an id past 32 bits is refused before anything is sent')
  t.match(stderr, /9999999999 is not a location id/)
})
