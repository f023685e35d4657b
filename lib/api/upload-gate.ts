// How many uploads one user may have in progress at once, counted from the moment the request arrives
// (before its body is read) until its answer has left and its handler is done. A client that goes away
// frees its place at once only while its body is still arriving (it will never be read); once the whole
// body has arrived, the place is held until the request is answered (its file read, or refused). Without it, each concurrent upload holds its
// body (a spool file, or a JSON body up to BODY_LIMIT_BYTES on the heap) before the parsing pool's own
// per-user queue is reached, so one person could have any number of bodies in memory at a time.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../core/errors.js'

const RETRY_AFTER_S = 5

/** Where an upload counted by the gate is: its body arriving, its handler at work, answered, gone. */
interface Slot {
  user: number
  handling: boolean
  /** Its answer has been given (to the client, or to a closed connection). */
  answered: boolean
  /** The connection closed before the whole body arrived: nothing of it will be read. */
  abandoned: boolean
  closed: boolean
  left: boolean
}

export class UploadGate {
  private readonly inProgress = new Map<number, number>()
  private readonly slots = new WeakMap<FastifyRequest, Slot>()

  constructor(private readonly perUser: number) {}

  /** Counts the requests of `scope` (a plugin's routes, whose handlers answer through reply.send): from arrival until answered. */
  countIn(scope: FastifyInstance) {
    scope.addHook('onRequest', async (request, reply) => this.enter(request, reply))
    scope.addHook('onSend', async (request) => this.answered(request))
  }

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
    const slot: Slot = { user, handling: false, answered: false, abandoned: false, closed: false, left: false }
    this.slots.set(request, slot)
    // The response's 'close' comes once, whether the answer was sent or the client went away, mid-body,
    // between its last byte and the handler, or while the handler works on.
    reply.raw.once('close', () => {
      slot.closed = true
      slot.abandoned = !request.raw.complete
      this.leaveIfOver(slot)
    })
  }

  /**
   * For an onSend hook: `request`'s answer is given, by its handler or by a refusal before it. Fastify
   * runs onSend for every `reply.send`, the client gone or not; a route counted here must answer by it.
   */
  answered(request: FastifyRequest) {
    const slot = this.slots.get(request)
    if (!slot) return
    slot.answered = true
    this.leaveIfOver(slot)
  }

  /** `handler` for routes whose requests the gate counts: their place is held while it works. */
  holding<Q extends FastifyRequest, A extends unknown[], R>(handler: (request: Q, ...rest: A) => Promise<R>) {
    return async (request: Q, ...rest: A): Promise<R> => {
      const slot = this.slots.get(request)
      if (slot) slot.handling = true
      try {
        return await handler(request, ...rest)
      } finally {
        if (slot) {
          slot.handling = false
          this.leaveIfOver(slot)
        }
      }
    }
  }

  private leaveIfOver(slot: Slot) {
    if (slot.left || !slot.closed || slot.handling || !(slot.answered || slot.abandoned)) return
    slot.left = true
    const left = (this.inProgress.get(slot.user) ?? 1) - 1
    if (left > 0) this.inProgress.set(slot.user, left)
    else this.inProgress.delete(slot.user)
  }
}
