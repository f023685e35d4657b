// A secret for a command (set-password), never from argv (which other users of the machine can read in
// the process list): the first line of stdin when it is piped, else typed at a prompt without echo.
import { createInterface } from 'node:readline'

export async function readSecret(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) {
    let text = ''
    for await (const chunk of process.stdin) text += chunk
    return text.split(/\r?\n/)[0]
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true })
  // Typed characters are not echoed: readline writes through this, and only the prompt is shown.
  const echo = (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput
  ;(rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
    if (s.includes(prompt)) echo.call(rl, prompt)
  }
  try {
    return await new Promise<string>((resolve) => rl.question(prompt, resolve))
  } finally {
    process.stderr.write('\n')
    rl.close()
  }
}
