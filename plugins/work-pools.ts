// The worker-thread pools of heavy work (lib/core/worker-pool.ts) take their limits from the
// configuration. Their threads are the process's, shared by every application it builds (tests build
// many): an idle thread leaves after a minute and never keeps the process alive.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { setPoolLimits } from '../lib/core/worker-pool.js'

export default fp(
  async function workPools(app: FastifyInstance) {
    const { WORKER_THREADS, WORK_QUEUE_PER_USER, WORK_QUEUE_MAX } = app.config
    setPoolLimits({ threads: WORKER_THREADS, perOwner: WORK_QUEUE_PER_USER, total: WORK_QUEUE_MAX })
  },
  { name: 'work-pools', dependencies: ['config'] },
)
