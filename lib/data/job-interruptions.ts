// Jobs and a database that goes away (docs/decisions.md, "Background jobs"). A job whose connection is
// lost has rolled back whole; waiting JOB_EXPIRE_SECONDS for pg-boss to take it for dead would leave an
// upload unprocessed for an hour. So the worker that ran it waits for the database to answer again and
// runs it once more itself (a clean run, as the first would have been). pg-boss also completes and
// fails jobs without awaiting the statement: with the database gone that rejection went unheard and
// ended the process; here those two statements wait for the database instead.
import { createRequire } from 'node:module'
import { sql, type Kysely } from 'kysely'
import { isConnectionFailure } from '../core/errors.js'

/** How often a worker asks whether the database answers again. */
const ASK_EVERY_MS = 500

/** Whether `error`, or an error it wraps (`cause`), is a lost or refused connection or a hung database. */
export function lostConnection(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isConnectionFailure(e)) return true
  }
  return false
}

/** Resolves true once `db` answers, or false as soon as `stopped()` (the process is shutting down). */
export async function untilAnswering<T>(db: Kysely<T>, stopped: () => boolean): Promise<boolean> {
  for (;;) {
    if (stopped()) return false
    try {
      await sql`select 1`.execute(db)
      return true
    } catch {
      await new Promise((resolve) => setTimeout(resolve, ASK_EVERY_MS))
    }
  }
}

interface Executor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

export interface InterruptionLog {
  warn(details: object, message: string): void
}

/**
 * `executor` with pg-boss's completion statements (complete, fail) made to wait for the database when
 * it is lost, and never to reject (a failure is logged; the job then stays active until its expiry, when
 * pg-boss retries it). Every other statement fails as it did (pg-boss reports those as `error` events).
 */
export function completionsSurvive<T>(executor: Executor, schema: string, db: Kysely<T>, stopped: () => boolean, log?: InterruptionLog): Executor {
  const plans = createRequire(import.meta.url)('pg-boss/src/plans.js') as Record<string, (schema: string) => string>
  const completions = new Set([plans.completeJobs(schema), plans.failJobsById(schema)])
  return {
    async executeSql(text, values) {
      if (!completions.has(text)) return executor.executeSql(text, values)
      for (;;) {
        try {
          return await executor.executeSql(text, values)
        } catch (error) {
          // Nobody awaits this statement: a rejection would end the process. Left active, the job is retried at its expiry.
          if (!lostConnection(error)) {
            log?.warn({ err: error }, 'a job outcome could not be written: the job is retried when it expires')
            return { rows: [{ count: 0 }] }
          }
          log?.warn({ err: error }, 'a job ended while the database was away: its outcome is written once it answers')
          if (!(await untilAnswering(db, stopped))) return { rows: [{ count: 0 }] }
        }
      }
    },
  }
}
