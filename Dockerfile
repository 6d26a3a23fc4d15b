# Horologium: build with the dev toolchain, run with production dependencies only.
# Node.js 26, the current LTS line, pinned to a release; package.json's engines and the
# better-sqlite3 in the lock file must accept it (test/deploy.test.ts checks both).
ARG NODE_IMAGE=node:26.10.0-trixie-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/copy-assets.mjs ./scripts/
COPY scripts/build-panel.mjs ./scripts/
COPY scripts/stamp-build.mjs ./scripts/
RUN npm run build && npm prune --omit=dev

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 HOROLOGIUM_STORE=sqlite:/data/horologium.db
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Ready, not just alive: 503 while the store cannot take writes (Redis away, a full disk), so that
# compose and orchestrators hold traffic back until then.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# No npm in the start command: signals go straight to node, which closes gracefully on SIGTERM.
CMD ["node", "dist/server.js"]
