// How many uploads one user may have in progress at once, counted from the moment the request arrives
// (before its body is read) until its answer has left. Without it, each concurrent upload holds its
// body (a spool file, or a JSON body up to BODY_LIMIT_BYTES on the heap) before the parsing pool's own
// per-user queue is reached, so one person could have any number of bodies in memory at a time.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../core/errors.js'

const RETRY_AFTER_S = 5

export class UploadGate {
  private readonly inProgress = new Map<number, number>()

  constructor(private readonly perUser: number) {}

  /** Counts `request` for its user until it ends; a 429 when she already has `perUser` in progress. */
  enter(request: FastifyRequest, reply: FastifyReply) {
    const user = request.user?.id
    if (user === undefined || request.method === 'GET' || request.method === 'HEAD') return
    const mine = this.inProgress.get(user) ?? 0
    if (mine >= this.perUser) {
      throw new ApiError(
        429,
        'TOO_MANY_UPLOADS',
        `You have ${mine} uploads in progress; retry in ${RETRY_AFTER_S} s`,
        { limit: this.perUser },
        { 'retry-after': String(RETRY_AFTER_S) },
      )
    }
    this.inProgress.set(user, mine + 1)
    // The response's 'close' comes once, whether the answer was sent or the client went away mid-body.
    reply.raw.once('close', () => this.leave(user))
  }

  private leave(user: number) {
    const left = (this.inProgress.get(user) ?? 1) - 1
    if (left > 0) this.inProgress.set(user, left)
    else this.inProgress.delete(user)
  }
}
