# The service as a container image: the embedded database in a volume (/data), or PostgreSQL with
# DATABASE_URL (deploy/compose.yaml). Build: `podman build -t rhizome-api .` (or docker build);
# run: `podman run -p 3000:3000 -v rhizome-data:/data rhizome-api`, then sign in at /app/ with the
# admin password the first start prints (also in the volume's admin-password).
# NODE_IMAGE: any Node.js 20, 22 or 24 image on Debian with npm (its `node` user runs the service).
ARG NODE_IMAGE=node:24-bookworm-slim

# Build: every dependency, the compiled server and the embedded database's migrated template (npm ci's
# `prepare`), then the dev tools removed.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY cli ./cli
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run prepare && npm prune --omit=dev --no-audit --no-fund

# Run: the built app, owned by root and read-only to the service; only /data is written.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
# Ready: the database answers, migrations are applied, the model is loaded, not shutting down.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself, not npm: a container's stop (SIGTERM) reaches the server, which drains and exits.
CMD ["node", "cli/start.mjs"]
