// The baselines: a bare Fastify hello-world on the same machine (logger off, like the app under bench),
// and a bare POST /detect that parses the same JSON bodies and answers constant scores: what any
// JSON POST service costs here before its first line of classification (bench/README.md, "Detection").
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/', async () => ({ hello: 'world' }))
app.post<{ Body: { text: string } }>('/detect', async (request) => ({ result: { 'not-offensive': '0.5', offensive: '0.5' }, text: request.body.text }))
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 3999) })
