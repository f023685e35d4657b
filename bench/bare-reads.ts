// The reference server of `npm run bench:reads`: each read's statements (bench/read-statements.ts)
// behind a bare Fastify route, on a bare pg pool with the API's session settings, answering the
// objects as the API does. No hooks, no authentication, no query building: what an HTTP hop in a
// process of its own costs on this machine, the floor under any API's ratio to the direct SQL.
// Started by bench/reads.ts with DATABASE_URL and PORT; GET /reads/<index> runs reads[index].
import Fastify from 'fastify'
import pg from 'pg'
import { BARE_APPLICATION, reads } from './read-statements.js'

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 10,
  application_name: BARE_APPLICATION,
  options: '-c TimeZone=UTC -c plan_cache_mode=force_custom_plan',
})
const app = Fastify({ logger: false })
app.get('/health', async () => ({ status: 'ok' }))
app.get<{ Params: { index: number } }>('/reads/:index', async (request, reply) => {
  const result = await reads[Number(request.params.index)].run(pool)
  return reply.type('application/json; charset=utf-8').send(`{"objects":${result.objects()}}`)
})
app.addHook('onClose', () => pool.end())
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void app.close().then(() => process.exit(0)))
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) })
