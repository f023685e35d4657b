// The ```sh blocks of a Markdown file, split into commands as bash reads them, and run by bash as a
// terminal runs them: the README's and the docs' commands are run by tests (readme-commands,
// docs-commands) from the text a person copies.
import { type ChildProcess, spawn } from 'node:child_process'

export interface Command {
  /** The command as bash runs it: continued lines joined, comments dropped. */
  text: string
  /** Its first line in the file. */
  line: number
}

export interface Block {
  /** The line of its opening ```sh. */
  line: number
  /** The heading it is under. */
  heading: string
  commands: Command[]
}

/** The ```sh blocks of a Markdown text, each with its commands. */
export function shBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n')
  const blocks: Block[] = []
  let heading = '(top)'
  for (let i = 0; i < lines.length; i++) {
    if (/^#{1,6} /.test(lines[i])) heading = lines[i].replace(/^#+ /, '')
    if (!/^```sh\s*$/.test(lines[i])) continue
    const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line))
    if (end < 0) throw new Error(`line ${i + 1}: a sh block that never closes`)
    blocks.push({ line: i + 1, heading, commands: commandsOf(lines.slice(i + 1, end).join('\n'), i + 2) })
    i = end
  }
  return blocks
}

/**
 * A block's text split into commands as bash reads them: a backslash before a newline (outside single
 * quotes) continues the line, and is dropped with the newline; a `#` that begins a word outside quotes
 * starts a comment, to the end of its line (so a backslash in a comment continues nothing); a newline
 * outside quotes ends a command. Quotes and backslash escapes are kept as written: bash reads them.
 */
export function commandsOf(text: string, firstLine: number): Command[] {
  const commands: Command[] = []
  let current = ''
  let quote: '' | "'" | '"' = ''
  let line = firstLine
  let start = firstLine
  const push = (chars: string) => {
    if (!current.trim() && chars.trim()) start = line
    current += chars
  }
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quote === "'") {
      push(char)
      if (char === "'") quote = ''
    } else if (char === '\\' && text[i + 1] === '\n') {
      i++
      line++
    } else if (char === '\\') {
      push(char + (text[i + 1] ?? ''))
      i++
    } else if (quote === '"') {
      push(char)
      if (char === '"') quote = ''
    } else if (char === "'" || char === '"') {
      quote = char
      push(char)
    } else if (char === '#' && (current === '' || /\s$/.test(current))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++
    } else if (char === '\n') {
      if (current.trim()) commands.push({ text: current.trim(), line: start })
      current = ''
    } else push(char)
    if (char === '\n') line++
  }
  if (quote) throw new Error(`line ${start}: a quote that never closes`)
  if (current.trim()) commands.push({ text: current.trim(), line: start })
  return commands
}

/** What a command did. */
export interface Ran {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** The commands running now: a test's teardown kills what is left (`running.forEach(killGroup)`). */
export const running = new Set<ChildProcess>()

/** `bash --norc --noprofile -c command`, stdin closed; its process group is killed past `timeoutMs`. */
export function bash(command: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['--norc', '--noprofile', '-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    running.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk) => (stdout += chunk))
    child.stderr!.on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => killGroup(child), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      running.delete(child)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

export function killGroup(child: ChildProcess) {
  try {
    process.kill(-child.pid!, 'SIGKILL')
  } catch {
    // already gone
  }
}
