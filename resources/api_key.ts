import { sql } from 'kysely'
import { ApiKey } from '../schemas/api_key.js'
import { defineResource } from '../lib/api/resource.js'
import { checkRequiredFields, coerceBody } from '../lib/api/body.js'
import { insertApiKey } from '../lib/data/auth.js'

// API keys, managed by superusers (the CLI does it through here while a server holds the embedded
// database). The key itself is in the 201 answer of its creation and nowhere else; only its SHA-256
// is stored, never shown, and usable as a filter, so a key can be revoked knowing only the key.
export default defineResource({
  name: 'api_key',
  schema: ApiKey,
  writers: 'superusers',
  query_fields: ['id', 'user_id', 'user__username', 'created_at', 'last_used_at'],
  detail_fields: ['id', 'user_id', 'created_at', 'last_used_at'],
  filtering: ['id', 'user_id', 'user__username', 'key_hash'],
  required_fields_for_post: ['user_id'],
  writable: ['user_id'],
  methods: { list: ['GET', 'POST', 'DELETE'], detail: ['GET', 'DELETE'] },
  list_delete_by: ['user_id', 'key_hash'],
  // Users who are not superusers see their own keys (when they were made, when last used).
  row_filter: (ctx) => sql<boolean>`t.user_id = ${ctx.user.id}`,
  hooks: {
    async create(ctx, body, encoding) {
      checkRequiredFields(ctx.resource, body)
      const { user_id } = coerceBody(ctx.resource, body, encoding) as { user_id: number }
      const { id, key } = await insertApiKey(ctx.db, user_id)
      return { id, once: { key } }
    },
  },
})
