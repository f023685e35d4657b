// Progress of a long step (the ingestion pipeline), reported from inside it: a job shows it, the CLI
// draws it. Reports are cheap calls; whoever listens decides how often to pass them on.

/** Where a step is: a named stage, and how far through its `total` units it has come. */
export interface ProgressReport {
  stage: string
  done: number
  total: number
}

export type Progress = (stage: string, done: number, total: number) => void

/** Reports to nobody. */
export const noProgress: Progress = () => {}
