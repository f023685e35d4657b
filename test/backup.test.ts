// Backup and restore as an operator runs them: the embedded database with `npm run cli -- backup` and
// `restore` (through the running server, and directly), PostgreSQL with the pg_dump / pg_restore
// procedure of docs/operations.md. Every read after the restore is the read before it, byte for byte.
import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { ADMIN_KEY, api, cli, postgresDatabase, type Server, startServer, until200 } from './processes.js'
import { admin, alice, build, engine } from './helper.js'

const run = promisify(execFile)

/** Columns every new process rewrites on its first request (lib/data/auth.ts, touchKey): not data. */
const TOUCHED = /"(last_login|last_used_at)":("[^"]*"|null)/g

/** Every list the API has (the first 1,000 rows) and the datapoint reads of every indicator, campaign and location. */
async function everyRead(server: Server): Promise<Map<string, { status: number; body: string }>> {
  const reads = new Map<string, { status: number; body: string }>()
  const get = async (path: string) => {
    const res = await api(server, path)
    const body = await res.text()
    reads.set(path, { status: res.status, body: res.status === 200 ? body.replace(TOUCHED, '"$1":"(touched)"') : '' })
    return res.status === 200 && !path.includes('format=csv') ? JSON.parse(body) : undefined
  }
  const listing = (await get('/')) as Record<string, { list_endpoint: string }>
  for (const { list_endpoint } of Object.values(listing)) await get(`${list_endpoint.replace('/api/v1', '')}?limit=1000`)
  const ids = async (path: string) => ((await get(path)).objects as Array<{ id: number }>).map((o) => o.id).join(',')
  const [indicators, campaigns, locations] = [await ids('/indicator/?limit=1000'), await ids('/campaign/?limit=1000'), await ids('/location/?limit=1000')]
  await get(`/campaign_datapoint/?indicator__in=${indicators}&campaign__in=${campaigns}&location_id__in=${locations}&limit=10000`)
  await get(`/campaign_datapoint/?indicator__in=${indicators}&campaign__in=${campaigns}&location_id__in=${locations}&format=csv`)
  await get(`/date_datapoint/?indicator__in=${indicators}&location_id__in=${locations}&limit=10000`)
  await get('/datapoint_history/?limit=10000')
  return reads
}

function sameReads(t: Test, after: Map<string, { status: number; body: string }>, before: Map<string, { status: number; body: string }>) {
  t.same([...after.keys()], [...before.keys()])
  const differing = [...before].filter(([path, read]) => after.get(path)?.status !== read.status || after.get(path)?.body !== read.body).map(([path]) => path)
  t.same(differing, [], `${before.size} reads, byte for byte`)
  const answered = [...before.values()].filter((r) => r.status === 200).length
  t.ok(answered > 25, `${answered} lists and datapoint reads answered`)
}

/** A data entry on top of the demo data, so the history has a change by the API. */
async function change(server: Server) {
  const raw = (await (await api(server, '/datapoint_history/?change=insert&campaign_id__gt=0&limit=1')).json()) as { objects: Array<Record<string, number>> }
  if (!raw.objects?.length) throw new Error(`no history: ${JSON.stringify(raw)}`)
  const { indicator_id, campaign_id, location_id } = raw.objects[0]
  const read = `/campaign_datapoint/?indicator__in=${indicator_id}&campaign__in=${campaign_id}&location_id__in=${location_id}`
  const cell = (await (await api(server, read)).json()) as { objects: Array<{ id: number }> }
  const res = await api(server, `/campaign_datapoint/${cell.objects[0].id}/`, { method: 'PATCH', body: JSON.stringify({ value: 4242 }) })
  if (res.status !== 200) throw new Error(await res.text())
}

t.test(
  'the embedded database: backup through the running server and directly, wipe, restore: every read the same',
  { skip: !!process.env.DATABASE_URL && 'embedded database only' },
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-backup-'))
    const files = mkdtempSync(join(tmpdir(), 'rhizome-backup-files-'))
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
    t.teardown(() => rmSync(files, { recursive: true, force: true }))
    const env = { DATA_DIR: dataDir, DATABASE_URL: '', RHIZOME_API_KEY: `admin:${ADMIN_KEY}` }
    let server = await startServer(t, env)
    await until200(server, '/health/ready')
    await change(server)
    const before = await everyRead(server)

    const throughServer = await cli(['backup', join(files, 'served.tar')], env)
    t.equal(throughServer.code, 0, throughServer.stderr)
    t.match(throughServer.stdout, /held by the server at http:\/\/127\.0\.0\.1:\d+: the backup is taken there/)
    t.match(throughServer.stdout, /backup written to .*served\.tar/)
    await server.stop()
    const direct = await cli(['backup', join(files, 'direct.tar')], env)
    t.equal(direct.code, 0, direct.stderr)
    t.notMatch(direct.stdout, /held by the server/, 'no server holds it now: opened directly')
    // A backup holds every password and key hash; the data directory, the database and the uploads.
    t.equal(statSync(join(files, 'served.tar')).mode & 0o777, 0o600, 'a backup is written 0600')
    t.equal(statSync(join(files, 'direct.tar')).mode & 0o777, 0o600)
    t.equal(statSync(dataDir).mode & 0o777, 0o700, 'DATA_DIR is 0700')
    t.equal(statSync(join(dataDir, 'pglite')).mode & 0o777, 0o700, 'and so is the database in it')

    const refused = await cli(['restore', join(files, 'direct.tar')], env)
    t.equal(refused.code, 1)
    t.match(refused.stderr, /is not empty: a restore only writes into an empty data directory/)

    rmSync(join(dataDir, 'pglite'), { recursive: true, force: true })
    const restored = await cli(['restore', join(files, 'direct.tar')], env)
    t.equal(restored.code, 0, restored.stderr)
    // A data directory made readable by others (by hand, or by an older version) is narrowed at start, and said so.
    chmodSync(dataDir, 0o755)
    chmodSync(join(dataDir, 'pglite'), 0o755)
    server = await startServer(t, env)
    await until200(server, '/health/ready')
    sameReads(t, await everyRead(server), before)
    t.equal(statSync(dataDir).mode & 0o777, 0o700, 'narrowed to 0700 at start')
    t.equal(statSync(join(dataDir, 'pglite')).mode & 0o777, 0o700)
    t.match(server.output(), /the data directory was readable by others: narrowed to 0700/)
    await server.stop()

    // The snapshot taken through the running server, into a data directory of its own.
    const second = mkdtempSync(join(tmpdir(), 'rhizome-backup-second-'))
    t.teardown(() => rmSync(second, { recursive: true, force: true }))
    const secondEnv = { DATA_DIR: second, DATABASE_URL: '' }
    t.equal((await cli(['restore', join(files, 'served.tar')], secondEnv)).code, 0)
    server = await startServer(t, secondEnv)
    await until200(server, '/health/ready')
    sameReads(t, await everyRead(server), before)

    writeFileSync(join(files, 'junk.tar'), 'not a backup')
    const third = join(files, 'third')
    const junk = await cli(['restore', join(files, 'junk.tar')], { DATA_DIR: third, DATABASE_URL: '' })
    t.equal(junk.code, 1)
    t.match(junk.stderr, /not a backup of an embedded rhizome-api database/)
    t.notOk(existsSync(join(third, 'pglite')), 'nothing left behind')
  },
)

t.test(
  'PostgreSQL: the pg_dump / pg_restore procedure of docs/operations.md gives every read back',
  { skip: !process.env.DATABASE_URL && 'PostgreSQL only' },
  async (t) => {
    const source = (await postgresDatabase(t))!
    const target = (await postgresDatabase(t))!
    const files = mkdtempSync(join(tmpdir(), 'rhizome-dump-'))
    t.teardown(() => rmSync(files, { recursive: true, force: true }))
    const dataDir = mkdtempSync(join(tmpdir(), 'rhizome-dump-data-'))
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
    const demo = await cli(['demo'], { DATABASE_URL: source, DATA_DIR: dataDir, ADMIN_API_KEY: ADMIN_KEY })
    t.equal(demo.code, 0, demo.stderr)
    let server = await startServer(t, { DATABASE_URL: source, DATA_DIR: dataDir })
    await until200(server, '/health/ready')
    await change(server)
    const before = await everyRead(server)
    // docs/operations.md, "PostgreSQL: a logical backup", while the server runs.
    const dump = join(files, 'rhizome.dump')
    await run('pg_dump', ['--format=custom', '--file', dump, source])
    await server.stop()
    await run('pg_restore', ['--exit-on-error', '--no-owner', '--dbname', target, dump])
    server = await startServer(t, { DATABASE_URL: target, DATA_DIR: dataDir })
    await until200(server, '/health/ready')
    sameReads(t, await everyRead(server), before)
    const backup = await cli(['backup', join(files, 'x.tar')], { DATABASE_URL: target, DATA_DIR: dataDir })
    t.equal(backup.code, 2)
    t.match(backup.stderr, /pg_dump and pg_restore \(docs\/operations\.md\)/)
  },
)

t.test('GET /api/v1/backup/ is for superusers, and for the embedded database only', async (t) => {
  const { app } = await build(t)
  const refused = await app.inject({ url: '/api/v1/backup/', headers: alice })
  t.equal(refused.statusCode, 403)
  t.equal((await app.inject({ url: '/api/v1/backup/' })).statusCode, 401)
  const res = await app.inject({ url: '/api/v1/backup/', headers: admin })
  if (engine === 'postgres') {
    t.equal(res.statusCode, 409)
    t.match(res.json(), { code: 'NOT_EMBEDDED', message: /pg_dump/ })
    return
  }
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/x-tar')
  t.match(res.headers['content-disposition'], /^attachment; filename="rhizome-.+\.tar"$/)
  t.ok(res.rawPayload.includes(Buffer.from('PG_VERSION')), 'a tar of the data directory')
})
