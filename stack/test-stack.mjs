// The throwaway stack `npm test` and `npm run mutate` run against: install, provision, start the servers on the
// test ports, and the environment the tests read.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  ensureChromium,
  ensureEmbeddedDb,
  ensureChatModel,
  ensureEmbeddingModel,
  ensureNpmDeps,
  ensureTemporalTestServer,
  provision,
  STACK_DIR,
} from './provision.mjs';
import { startStack } from './services.mjs';

/** Starts the stack in `.stack/test-data/<name>`; stop() stops it and removes the data unless KEEP_TEST_DATA. */
export async function startTestStack(name) {
  ensureNpmDeps();
  const bins = provision();
  const dataDir = join(STACK_DIR, 'test-data', name);
  const stack = await startStack({ profile: 'test', dataDir, bins });
  const env = {
    ...process.env,
    ...stack.env,
    TEMPORAL_TEST_SERVER: ensureTemporalTestServer(),
    // The embedded database's own tests start it even when the suite runs against MongoDB.
    MONGO_H2_JAR: bins.mongoH2 ?? ensureEmbeddedDb(),
    LOCAL_EMBEDDING_MODEL_DIR: process.env.LOCAL_EMBEDDING_MODEL_DIR ?? ensureEmbeddingModel(),
    LOCAL_LLM_MODEL_PATH: process.env.LOCAL_LLM_MODEL_PATH ?? ensureChatModel(),
    CHROMIUM_PATH: process.env.CHROMIUM_PATH ?? ensureChromium(),
    // The agent mail domain the tests give agents' addresses in (docs/email-agents.md).
    AGENT_EMAIL_DOMAINS: process.env.AGENT_EMAIL_DOMAINS ?? 'agents.example.test',
    NODE_ENV: 'test',
    VALIDATE_RESPONSES: 'true',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  };
  return {
    env,
    dataDir,
    async stop() {
      await stack.stop();
      if (!process.env.KEEP_TEST_DATA) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
