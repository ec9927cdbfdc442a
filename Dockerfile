# syntax=docker/dockerfile:1
# One Dockerfile, one image per process: build a target with `docker build --target <stage> .`
#   migrate      applies pending migrations, then exits (MIGRATE_MODE=check|wait: read-only modes)
#   api-gateway  the HTTP API, the portal and the dashboard, on 8080
#   dispatcher   health and metrics on 8081
#   sender       health and metrics on 8082
# Each runs `node <bundle>` from /app as uid 1000, under tini (PID 1, passes SIGTERM on), with
# production dependencies only: no tsx, no TypeScript, no dev dependency. Health is probed by
# compose and Kubernetes on GET /healthz and /readyz, so the images declare no HEALTHCHECK.
# Node 22, an LTS line in maintenance (Node 20 reached its end of life in April 2026), pinned
# exactly; the bundles target Node 20 (engines: >=20.19), so they run unchanged on it.
ARG NODE_IMAGE=node:22.21.1-bookworm-slim

# ---- build: every dependency, the Prisma client, the pages, the bundles ----
FROM ${NODE_IMAGE} AS build
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH CI=true
RUN npm install -g pnpm@10.34.8
WORKDIR /src
# Manifests first: the install layer is reused until a manifest or the lockfile changes.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY packages/bench/package.json packages/bench/
COPY packages/broker/package.json packages/broker/
COPY packages/contracts/package.json packages/contracts/
COPY packages/db/package.json packages/db/prisma.config.ts packages/db/
COPY packages/db/prisma packages/db/prisma
COPY packages/runtime/package.json packages/runtime/
# prisma.config.ts (read by @herald/db's postinstall) takes its defaults from @herald/runtime/config.
COPY packages/runtime/src packages/runtime/src
COPY packages/sdk/package.json packages/sdk/
COPY packages/transform/package.json packages/transform/
COPY packages/cli/package.json packages/cli/
COPY packages/web/package.json packages/web/
COPY services/api-gateway/package.json services/api-gateway/
COPY services/dispatcher/package.json services/dispatcher/
COPY services/sender/package.json services/sender/
# @herald/db's postinstall generates the Prisma client (engine-free) from the schema.
RUN pnpm install --frozen-lockfile
COPY tsconfig.base.json tsconfig.json ./
COPY scripts scripts
COPY packages packages
COPY services services
# Builds the pages (Vite), bundles each service (esbuild) and lays out /out/<stage>: the
# bundle, its assets and its production node_modules (`pnpm deploy --prod`, trimmed).
RUN node scripts/build-services.mjs --out /out

# ---- runtime: what every service image shares ----
FROM ${NODE_IMAGE} AS runtime
# tini, and no package manager: nothing installs packages at run time.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
    /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn \
    /usr/local/bin/yarnpkg /opt/yarn-*
ENV NODE_ENV=production
WORKDIR /app
# The node image's `node` user, by number so Kubernetes can check runAsNonRoot. The files
# below stay owned by root: the service can read them, not change them.
USER 1000:1000
ENTRYPOINT ["/usr/bin/tini", "--"]

FROM runtime AS migrate
COPY --from=build /out/migrate /app
CMD ["node", "--enable-source-maps", "--max-old-space-size=160", "packages/db/dist/migrate.mjs"]

FROM runtime AS api-gateway
COPY --from=build /out/api-gateway /app
EXPOSE 8080
CMD ["node", "--enable-source-maps", "--max-old-space-size=160", "services/api-gateway/dist/main.mjs"]

FROM runtime AS dispatcher
COPY --from=build /out/dispatcher /app
EXPOSE 8081
CMD ["node", "--enable-source-maps", "--max-old-space-size=160", "services/dispatcher/dist/main.mjs"]

FROM runtime AS sender
COPY --from=build /out/sender /app
EXPOSE 8082
CMD ["node", "--enable-source-maps", "--max-old-space-size=160", "services/sender/dist/main.mjs"]
