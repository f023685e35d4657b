// Where a GET reads: a replica when there are some, the primary otherwise, and the primary again when
// the replica fails mid-read (docs/scaling.md); and whether a cache may keep what was read there.
import type { FastifyReply } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB } from '../../schemas/index.js'
import { isReplicaFailure } from '../core/errors.js'
import type { ReadReplicas } from '../data/replicas.js'
import type { Resource } from './resource.js'

/**
 * Runs `read` on the database a GET of `resource` reads from, telling it whether a cache may keep what
 * it reads there (the primary, or a replica that has replayed every change notified so far). A detail
 * the detail cache keeps (`detail`) waits for such a replica or reads the primary; a list reads any
 * replica in use, and is kept only when it was fresh. Says which in `x-database` when replicas are in use.
 */
export async function onReadTarget<T>(
  replicas: ReadReplicas | undefined,
  primary: Kysely<DB>,
  resource: Resource,
  detail: boolean,
  reply: FastifyReply,
  read: (db: Kysely<DB>, keepable: boolean) => Promise<T>,
): Promise<T> {
  const target = resource.kind === 'model' && replicas ? (detail ? replicas.cacheableRead() : replicas.read()) : undefined
  if (target) reply.header('x-database', target.name)
  if (!target || target.name === 'primary') return read(primary, true)
  try {
    return await read(target.db, replicas!.fresh(target.name))
  } catch (error) {
    // A replica that went down (or conflicts with its recovery): the primary answers instead.
    if (reply.sent || !isReplicaFailure(error)) throw error
    replicas!.drop(target.name)
    reply.header('x-database', 'primary')
    return read(primary, true)
  }
}
