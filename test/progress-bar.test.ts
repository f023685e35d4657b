// The CLI's progress bar (cli/progress-bar.ts) follows the pipeline's stages on a terminal, and draws
// nothing where stderr is not one (a log file, CI).
import { PassThrough } from 'node:stream'
import t from 'tap'
import { progressBar } from '../cli/progress-bar.js'

function terminal(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), {
    isTTY,
    columns: 120,
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
  }) as unknown as NodeJS.WriteStream
  let text = ''
  ;(stream as unknown as PassThrough).on('data', (chunk) => (text += chunk))
  return { stream, text: () => text }
}

t.test('stages, counts and totals are drawn on a terminal', async (t) => {
  const { stream, text } = terminal(true)
  const bar = progressBar(stream)
  bar.update({ stage: 'rows parsed', done: 100, total: 100 })
  bar.update({ stage: 'submissions written', done: 40, total: 80 })
  bar.stop()
  t.match(text(), /submissions written: 40\/80/)
  t.match(text(), /50%/)
})

t.test("a stage's place among the step's stages is drawn before it", async (t) => {
  const { stream, text } = terminal(true)
  const bar = progressBar(stream)
  bar.update({ stage: 'datapoints written', done: 3, total: 10, step: 5, steps: 6 })
  bar.stop()
  t.match(text(), /5\/6 datapoints written: 3\/10/)
})

t.test('nothing is drawn where stderr is not a terminal', async (t) => {
  const { stream, text } = terminal(false)
  const bar = progressBar(stream)
  bar.update({ stage: 'rows parsed', done: 1, total: 2 })
  bar.stop()
  t.equal(text(), '')
})
