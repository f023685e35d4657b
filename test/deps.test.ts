// `npm run deps` (cli/deps.ts): which line a version is on, and the README's reasons for the
// dependencies kept behind, read as the command reads them (no registry is asked here).
import { readFileSync } from 'node:fs'
import t from 'tap'
import { keptReasons, lineOf } from '../cli/deps.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

t.test('a line is the major version, or the minor below 1.0', async (t) => {
  t.equal(lineOf('5.9.3'), '5')
  t.equal(lineOf('7.0.2'), '7')
  t.equal(lineOf('0.4.6'), '0.4')
  t.not(lineOf('0.4.6'), lineOf('0.5.17'), 'below 1.0 a minor is a line of its own')
})

t.test('README "Kept behind" gives a reason for each package it keeps, and each is a direct dependency', async (t) => {
  const reasons = keptReasons(readme)
  t.ok(reasons.size >= 1, `${reasons.size} kept`)
  const direct = { ...manifest.dependencies, ...manifest.devDependencies }
  for (const [name, why] of reasons) {
    t.ok(name in direct, `${name} is a direct dependency`)
    t.ok(why.length > 20, `${name}: a reason (${why.slice(0, 40)}…)`)
  }
})
