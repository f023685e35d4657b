// Progress of a long step (the ingestion pipeline), reported from inside it: a job shows it, the CLI
// draws it. Reports are cheap calls; whoever listens decides how often to pass them on.

/** Where a step is: a named stage, and how far through its `total` units it has come. */
export interface ProgressReport extends Partial<StagePlace> {
  stage: string
  done: number
  total: number
}

/** Where a stage stands among the step's stages, in order: stage `step` (from 1) of `steps`. */
export interface StagePlace {
  step: number
  steps: number
}

export type Progress = (stage: string, done: number, total: number, place?: StagePlace) => void

/** Reports to nobody. */
export const noProgress: Progress = () => {}

/** `progress`, each report placed among `stages` (the step's stages, in the order they run). */
export function inStages(stages: readonly string[], progress: Progress): Progress {
  return (stage, done, total) => {
    const at = stages.indexOf(stage)
    progress(stage, done, total, at < 0 ? undefined : { step: at + 1, steps: stages.length })
  }
}
