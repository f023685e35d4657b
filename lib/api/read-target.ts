// Where a GET reads: a replica when there are some, the primary otherwise, and the primary again when
// the replica fails mid-read (docs/scaling.md); and whether a cache may keep what was read there.
import type { Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { isReplicaFailure } from '../core/errors.js'
import type { ReadReplicas } from '../data/replicas.js'
import { meansPrimaryLost } from '../data/writable-host.js'
import type { Resource } from './resource.js'

/** What a read tells of where it went: a route's reply, or nothing (a read composed into another). */
export interface ReadReply {
  header(name: string, value: string): unknown
  readonly sent: boolean
}

/** The reply of a read whose headers go nowhere. */
export const UNSENT: ReadReply = { header: () => undefined, sent: false }

/** A database to read from, and whether a cache may keep what is read there. */
export interface ReadTarget {
  db: Kysely<DB>
  /** The primary, or a replica that has replayed every change notified so far. */
  keepable: boolean
  /** The replica's name; undefined for the primary. */
  replica?: string
}

/** The read routing of this process: its primary and its replicas (none without READ_REPLICA_URLS). */
export class ReadRouting {
  constructor(
    private readonly primary: Kysely<DB>,
    private readonly replicas: ReadReplicas | undefined,
    /** Several hosts in DATABASE_URL: another one, for reads while a failover is under way. */
    private readonly standby?: Kysely<DB>,
  ) {}

  /**
   * Where a GET of `resource` reads. A detail the detail cache keeps (`detail`) waits for a fresh replica
   * or reads the primary; a list reads any replica in use, and is kept only when it was fresh. Says which
   * in `x-database` when replicas are in use.
   */
  targetOf(resource: Resource, detail: boolean, reply: ReadReply): ReadTarget {
    const replicas = this.replicas
    const target = resource.kind === 'model' && replicas ? (detail ? replicas.cacheableRead() : replicas.read()) : undefined
    if (target) reply.header('x-database', target.name)
    if (!target || target.name === 'primary') return { db: this.primary, keepable: true }
    return { db: target.db, keepable: replicas!.fresh(target.name), replica: target.name }
  }

  /**
   * After a read on `target` threw `error`: the primary, when a replica went down (or conflicts with its
   * recovery) and nothing was sent yet (the replica is left out from now on); the standby, when the
   * primary is lost; else undefined, and the error is the request's.
   */
  failOver(target: ReadTarget, error: unknown, reply: ReadReply): ReadTarget | undefined {
    if (reply.sent) return undefined
    if (target.replica === undefined && this.standby && meansPrimaryLost(error)) {
      // No primary (a failover): the standby answers, and what it answers is not kept.
      reply.header('x-database', 'standby')
      return { db: this.standby, keepable: false }
    }
    if (target.replica === undefined || !isReplicaFailure(error)) return undefined
    this.replicas!.drop(target.replica)
    reply.header('x-database', 'primary')
    return { db: this.primary, keepable: true }
  }
}
