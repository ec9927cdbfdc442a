# syntax=docker/dockerfile:1
# One image build, one stage per thing to run. Services run TypeScript through tsx.
FROM node:20.19-bookworm-slim AS base
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH CI=true
# The same heap cap as scripts/lib/setup.mjs SERVICE_NODE_FLAGS: under 250 MB resident per service.
ENV NODE_OPTIONS=--max-old-space-size=160
RUN npm install -g pnpm@10.34.8 && apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app

FROM base AS build
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY packages/db/package.json packages/db/prisma.config.ts packages/db/
COPY packages/db/prisma packages/db/prisma
COPY packages/broker/package.json packages/broker/
COPY packages/contracts/package.json packages/contracts/
COPY packages/runtime/package.json packages/runtime/
COPY packages/web/package.json packages/web/
COPY services/api-gateway/package.json services/api-gateway/
COPY services/dispatcher/package.json services/dispatcher/
COPY services/sender/package.json services/sender/
RUN pnpm install --frozen-lockfile
COPY tsconfig.base.json tsconfig.json ./
COPY packages packages
COPY services services
# The portal and dashboard pages the gateway serves (packages/web/dist).
RUN pnpm --filter @herald/web build

# Applies pending migrations, then exits: run it before the services start.
FROM build AS migrate
USER node
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--import", "tsx", "packages/db/src/migrateCli.ts"]

FROM build AS api-gateway
USER node
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--import", "tsx", "services/api-gateway/src/main.ts"]

FROM build AS dispatcher
USER node
EXPOSE 8081
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--import", "tsx", "services/dispatcher/src/main.ts"]

FROM build AS sender
USER node
EXPOSE 8082
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--import", "tsx", "services/sender/src/main.ts"]
