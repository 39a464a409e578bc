import { Redis } from 'ioredis';
import type { ActivityDeps } from '@activities/index';
import type { Config } from '@lib/config';
import { connectDatabase } from '@lib/db/models';
import { createLlmClient } from '@lib/llm';
import { createMailer } from '@lib/mail';
import { createRealtimeEmitter } from '@lib/realtime/emitter';

/** The activities' dependencies, from config; close() releases them. */
export async function createWorkerDeps(
  config: Config,
): Promise<{ deps: ActivityDeps; close: () => Promise<void> }> {
  const { conn, models } = await connectDatabase(config.mongodbUri);
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3 });
  const mailer = createMailer(config.mail.smtpUrl, config.mail.from);
  return {
    deps: {
      mailer,
      publicBaseUrl: config.publicBaseUrl,
      models,
      llm: createLlmClient(config.llm),
      realtime: createRealtimeEmitter(redis),
      allowPrivateOutbound: config.allowPrivateOutbound,
    },
    async close() {
      mailer.close();
      redis.disconnect();
      await conn.close();
    },
  };
}
