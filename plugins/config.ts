// The validated configuration, available to every plugin as `app.config`.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../lib/core/config.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

export default fp<{ config: Config }>(
  async function config(app: FastifyInstance, options) {
    app.decorate('config', options.config)
  },
  { name: 'config' },
)
