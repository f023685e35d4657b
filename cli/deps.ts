// `npm run deps`: the direct dependencies a major line (or, below 1.0, a minor line) behind the registry's
// latest, each with the reason it stays there, read from the README's table "Kept behind". A package
// behind without a reason there is a task: the command exits 1, so CI or a reviewer sees it.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The line a version belongs to: its major, or `0.minor` below 1.0 (where a minor may break). */
export const lineOf = (version: string): string => {
  const [major, minor] = version.split('.')
  return major === '0' ? `0.${minor}` : major
}

/** README "Kept behind": package → why it stays. */
export function keptReasons(readme: string): Map<string, string> {
  const section = readme.split(/^### Kept behind$/m)[1]?.split(/^#{2,3} /m)[0] ?? ''
  const reasons = new Map<string, string>()
  for (const [, cells] of section.matchAll(/^\|(.+)\|\s*$/gm)) {
    const [name, , why] = cells.split('|').map((cell) => cell.trim())
    if (name && why && !/^-+$/.test(name) && name !== 'package') reasons.set(name.replace(/`/g, ''), why)
  }
  return reasons
}

interface Outdated {
  current?: string
  latest?: string
}

function outdated(): Record<string, Outdated> {
  try {
    return JSON.parse(execFileSync('npm', ['outdated', '--json'], { cwd: ROOT, encoding: 'utf8' }) || '{}')
  } catch (error) {
    // npm outdated exits 1 when anything is outdated; its JSON is on stdout all the same.
    return JSON.parse((error as { stdout?: string }).stdout || '{}')
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const reasons = keptReasons(readFileSync(`${ROOT}/README.md`, 'utf8'))
  const behind = Object.entries(outdated()).flatMap(([name, { current, latest }]) =>
    current && latest && lineOf(current) !== lineOf(latest) ? [{ name, current, latest }] : [],
  )
  let unexplained = 0
  for (const { name, current, latest } of behind) {
    // An alias (`pglite-pg17@npm:@electric-sql/pglite@0.4.6`) is listed as `alias:package@version`.
    const why = reasons.get(name.split(':')[0])
    if (!why) unexplained++
    console.log(
      `${name.padEnd(32)} ${current.padEnd(10)} → ${latest.padEnd(10)} ${why ?? 'NOT EXPLAINED: move it to its current line, or say why in README "Kept behind"'}`,
    )
  }
  if (!behind.length) console.log('every direct dependency is on its current line')
  process.exit(unexplained ? 1 : 0)
}
