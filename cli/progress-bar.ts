// The pipeline's progress (lib/core/progress.ts) as a bar on stderr, drawn by cli-progress: one bar,
// its label and total following the stage. Nothing is drawn when stderr is not a terminal.
import { SingleBar } from 'cli-progress'
import type { ProgressReport } from '../lib/core/progress.js'

export function progressBar(stream: NodeJS.WriteStream = process.stderr) {
  const bar = new SingleBar({
    stream,
    format: '{bar} {percentage}% | {place}{stage}: {value}/{total} | {duration_formatted}',
    hideCursor: true,
    clearOnComplete: false,
    // Redrawn at most this often, however often the pipeline reports.
    fps: 5,
  })
  let stage: string | undefined
  return {
    update({ stage: next, done, total, step, steps }: ProgressReport) {
      const place = step ? `${step}/${steps} ` : ''
      if (stage === undefined) bar.start(total, done, { stage: next, place })
      else if (next !== stage) bar.setTotal(total)
      stage = next
      bar.update(done, { stage: next, place })
    },
    stop() {
      if (stage !== undefined) bar.stop()
    },
  }
}
