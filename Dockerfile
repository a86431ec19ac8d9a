# One image for every flashgate app; the command chooses which (docker-compose.yml):
#   apps/purchase-api/src/main.ts · apps/cache-maintainer/src/main.ts · apps/dashboard/src/main.ts ·
#   apps/cli/src/main.ts <command> (the one-shot setup: migrate, register the connector)
# Node 24 runs the TypeScript sources as they are. NODE_IMAGE is a build argument so that a machine
# without an image registry builds FROM a local image (docker/local/build.sh).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps apps
COPY packages packages
# Production dependencies only: no test runner, linter or mutation tester in the image.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund --no-update-notifier

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    FLASHGATE_HOME=/tmp/flashgate
WORKDIR /app
COPY --from=dependencies /app/node_modules node_modules
COPY package.json ./
COPY apps apps
COPY packages packages
COPY connectors/*.json connectors/
USER node
ENTRYPOINT ["node"]
CMD ["apps/purchase-api/src/main.ts"]
