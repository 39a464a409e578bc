# One image for both processes: `node dist/api/server.js` (api) and `node dist/worker/main.js` (worker).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json openapi.yaml ./
COPY api api
COPY lib lib
COPY workflows workflows
COPY activities activities
COPY worker worker
COPY cli cli
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json openapi.yaml ./
USER node
EXPOSE 3000
CMD ["node", "--enable-source-maps", "dist/api/server.js"]
