// The failover formation's settings file as its two readers read it: systemd's EnvironmentFile= (the
// units deploy/systemd/pgaf-*.service) and a shell's `set -a; . /etc/pgaf.env` (docs/operations.md's
// role and uri steps). systemd takes the whole rest of a line as the value, an inline "# comment"
// included, and a shell runs an unquoted & or <: a sample written for one reader broke the other (the
// units got PGAF_PORT "5432   # m: 5431"). deploy/pgaf.env.example is what the docs install.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import t from 'tap'

const SAMPLE = 'deploy/pgaf.env.example'
const UNITS = ['deploy/systemd/pgaf-monitor.service', 'deploy/systemd/pgaf-node.service']
const SCRIPT = join(process.cwd(), 'deploy', 'auto-failover.sh')

/**
 * An environment file as systemd reads it (systemd.exec(5), EnvironmentFile=): a line starting with #
 * or ; is a comment, every other `KEY=VALUE`; a value in double or single quotes loses them (a
 * backslash escapes within double quotes), any other keeps the rest of its line, "#" included.
 */
function systemdEnvironment(text: string): Map<string, string> {
  const found = new Map<string, string>()
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (!line || line.startsWith('#') || line.startsWith(';')) continue
    const equals = line.indexOf('=')
    const key = line.slice(0, equals).trim()
    let value = line.slice(equals + 1).trim()
    if (value.length >= 2 && value[0] === '"' && value.at(-1) === '"') value = value.slice(1, -1).replace(/\\(.)/g, '$1')
    else if (value.length >= 2 && value[0] === "'" && value.at(-1) === "'") value = value.slice(1, -1)
    found.set(key, value)
  }
  return found
}

/** The same file as bash reads it with `set -a; . file`: the PGAF_ variables it exports. */
function shellEnvironment(path: string): Map<string, string> {
  // No startup file (bash reads ~/.bashrc when its input is a socket): only the file's own settings.
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', 'set -a; . "$1"; set +a; env -0', 'bash', path], {
    env: {},
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Map(
    out
      .split('\0')
      .filter((entry) => entry.startsWith('PGAF_'))
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  )
}

t.test('the formation’s settings read alike by systemd and by a shell', async (t) => {
  const bySystemd = systemdEnvironment(readFileSync(SAMPLE, 'utf8'))
  const byShell = shellEnvironment(SAMPLE)
  t.same(Object.fromEntries(byShell), Object.fromEntries(bySystemd), 'every setting the same value for both readers')
  for (const [key, value] of bySystemd) {
    t.notMatch(value, /\s#|^\s|\s$/, `${key}: no comment or space kept in its value`)
  }
  t.match(bySystemd.get('PGAF_MONITOR_URL'), /^postgres:\/\/autoctl_node:[^@\s]+@[\d.]+:\d+\/pg_auto_failover\?sslmode=verify-full&sslrootcert=\//)
  t.match(bySystemd.get('PGAF_PORT'), /^\d+$/)

  // Every setting a unit's command names is one the file sets; the units read the file the docs install.
  for (const unit of UNITS) {
    const text = readFileSync(unit, 'utf8')
    t.match(text, /^EnvironmentFile=\/etc\/pgaf\.env$/m, `${unit} reads /etc/pgaf.env`)
    const command = /^ExecStart=(.*)$/m.exec(text)![1]
    for (const [, name] of command.matchAll(/\$\{(\w+)\}/g)) t.ok(bySystemd.has(name), `${unit}: ${name} is set by the sample`)
    t.match(command, /^\/srv\/rhizome-api\/deploy\/auto-failover\.sh /, `${unit} runs the script from the checkout the docs name`)
  }
  const operations = readFileSync('docs/operations.md', 'utf8')
  t.match(operations, /install -m 600 -o postgres deploy\/pgaf\.env\.example \/etc\/pgaf\.env/, 'the docs install this sample')
  t.match(operations, /this project at \/srv\/rhizome-api/, 'and say where the units expect the project')
})

t.test('the parser reads an inline comment as systemd does', async (t) => {
  // The sample the docs held before: its values, as the units received them.
  const before = systemdEnvironment('PGAF_PORT=5432                 # m: 5431\nPGAF_HOSTNAME=10.0.0.11        # this machine\n')
  t.equal(before.get('PGAF_PORT'), '5432                 # m: 5431')
  t.equal(systemdEnvironment('# a comment\n; another\nX="a b&c"\n').get('X'), 'a b&c')
})

t.test('a node directory that cannot be made stops the script with what to do (docs/operations.md’s mkdir and chown)', async (t) => {
  // As the units run it: as postgres, under a parent root keeps (as root, through runuser); run by
  // another user, under a parent it may not write.
  const parent = mkdtempSync(join(tmpdir(), 'rhizome-pgaf-parent-'))
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  const asRoot = process.getuid?.() === 0
  if (!asRoot) chmodSync(parent, 0o555)
  const dir = join(parent, 'pgaf', 'monitor')
  const [file, args] = asRoot ? ['runuser', ['-u', 'postgres', '--', SCRIPT, 'monitor', dir, '5431']] : [SCRIPT, ['monitor', dir, '5431']]
  const ran = spawnSync(file, args, { encoding: 'utf8' })
  const user = asRoot ? 'postgres' : userInfo().username
  t.equal(ran.status, 1, 'it stops', { stderr: ran.stderr })
  t.match(
    ran.stderr,
    `cannot make ${dir} as ${user}: create its parent and give it to ${user} (mkdir -p ${join(parent, 'pgaf')} && chown ${user} ${join(parent, 'pgaf')})`,
  )
  t.notOk(existsSync(join(dir, 'pgdata')), 'and makes nothing')
})
