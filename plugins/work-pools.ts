// The worker-thread pools of heavy work (lib/core/worker-pool.ts) take their limits from the
// configuration. Their threads are the process's, shared by every application it builds (tests build
// many): an idle thread leaves after a minute and never keeps the process alive. And the one gate of
// each person's uploads in progress (lib/api/upload-gate.ts), which every route that takes a body to
// work through counts against: a document upload, a DHIS2 data value set, a DHIS2 metadata import.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { setPoolLimits } from '../lib/core/worker-pool.js'
import { UploadGate } from '../lib/api/upload-gate.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Each person's uploads in progress, WORK_QUEUE_PER_USER at once (429 past it), whichever route took them. */
    uploadGate: UploadGate
  }
}

export default fp(
  async function workPools(app: FastifyInstance) {
    const { WORKER_THREADS, WORK_QUEUE_PER_USER, WORK_QUEUE_MAX } = app.config
    setPoolLimits({ threads: WORKER_THREADS, perOwner: WORK_QUEUE_PER_USER, total: WORK_QUEUE_MAX })
    app.decorate('uploadGate', new UploadGate(WORK_QUEUE_PER_USER))
  },
  { name: 'work-pools', dependencies: ['config'] },
)
