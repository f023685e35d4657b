// `GET /api/v1/backup/`: a snapshot of the embedded database, for superusers (lib/data/backup.ts). The
// CLI's `backup` comes here when a running server holds the data directory.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ApiError, forbidden } from '../lib/core/errors.js'
import { API_SECURITY, errorSchema } from '../lib/api/openapi.js'
import { snapshot } from '../lib/data/backup.js'

export default fp(
  async function backup(app: FastifyInstance) {
    app.get(
      '/api/v1/backup/',
      {
        schema: {
          tags: ['operations'],
          operationId: 'getBackup',
          summary: 'A snapshot of the embedded database (a tar file for `npm run cli -- restore`); superusers only',
          security: API_SECURITY,
          response: {
            200: { description: 'The data directory as a tar file', content: { 'application/x-tar': { schema: { type: 'string', format: 'binary' } } } },
            401: errorSchema,
            403: errorSchema,
            409: errorSchema,
          },
        },
      },
      async (request, reply) => {
        if (!request.user!.is_superuser) throw forbidden('Only a superuser may take a backup')
        if (!app.db.embedded) {
          throw new ApiError(409, 'NOT_EMBEDDED', 'This server runs on PostgreSQL: back it up with pg_dump or a base backup (docs/operations.md)')
        }
        const stamp = new Date().toISOString().replace(/[:.]/g, '-')
        return reply
          .header('content-type', 'application/x-tar')
          .header('content-disposition', `attachment; filename="rhizome-${stamp}.tar"`)
          .send(await snapshot(app.db))
      },
    )
  },
  // Encapsulated: a route plugin, nothing of it is for the rest of the app.
  { name: 'backup', dependencies: ['db', 'auth'], encapsulate: true },
)
