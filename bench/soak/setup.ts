/**
 * What each of the soak's organizations works with, made over HTTP as a client would (the organization itself is
 * bootstrapped as the benches do): an agent, a chain with a fan-out step, one-step chains behind a webhook, a
 * schedule and an app, a knowledge base, a table, and a pinned, approved app whose manifest declares a table and
 * a chain.
 */
import { randomBytes } from 'node:crypto';
import type { Deps } from '@lib/deps';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import type { SoakHttp } from './http';

/** What the scripted model recognises in a request's system message (bench/soak/model.ts). */
export const AGENT_MARK = 'You are the soak agent.';
export const CHAIN_MARK = 'You are a soak chain.';

export const ROWS_TABLE = 'soak_rows';
export const APP_TABLE = 'soak_app';

const obj = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
});

export async function setUpOrg(deps: Deps, http: SoakHttp, name: string) {
  const boot = await bootstrapOrganization(deps, {
    orgName: name,
    email: `soak-${randomBytes(4).toString('hex')}@example.test`,
    name: `${name} Owner`,
  });
  // An API key, not a session: it does not expire during an hour's run (nor does the socket it opens).
  const key = boot.apiKey;
  const orgId = boot.organizationId;
  const path = (p: string) => `/orgs/${orgId}${p}`;
  const post = <T = Record<string, unknown>>(p: string, body?: unknown) =>
    http.json<T>('POST', path(p), key, body);
  const put = (p: string, body?: unknown) => http.json('PUT', path(p), key, body);

  const agentId = (
    await post<{ id: string }>('/agents', {
      name: 'Soak helper',
      description: 'answers the soak',
      instructions: `${AGENT_MARK} Be brief.`,
      model: 'gpt-4o-mini',
    })
  ).id;
  const chain = async (chainName: string, steps: unknown[]) =>
    (
      await post<{ actionChainId: string }>('/chains', {
        name: chainName,
        description: 'soak',
        llmInstructions: CHAIN_MARK,
        steps,
      })
    ).actionChainId;
  const fanOutChainId = await chain('Soak fan-out', [
    {
      stepOrder: 1,
      name: 'each',
      forEachElement: '$.input.items',
      instructions: 'Item {{element}}',
      outputSchema: obj({ x: { type: 'string' } }),
    },
    { stepOrder: 2, name: 'join', instructions: 'Join {{#each x}}{{this}} {{/each}}' },
  ]);
  const messageStep = {
    stepOrder: 1,
    instructions: 'Handle {{input.message}}',
    inputSchema: obj({ message: { type: 'string' } }),
    outputSchema: obj({ ok: { type: 'boolean' } }),
  };
  const [hookChainId, scheduleChainId, appChainId] = [
    await chain('Soak webhook handler', [messageStep]),
    await chain('Soak schedule handler', [messageStep]),
    await chain('Soak app workflow', [messageStep]),
  ];

  const webhookId = (await post<{ webhookId: string }>('/webhooks', { name: 'Soak events' })).webhookId;
  await post(`/webhooks/${webhookId}/handlers`, {
    handlerType: 'action-chain',
    actionChainId: hookChainId,
    instructions: 'Handle the event',
    inputMapping: { message: '{{body.text}}' },
  });
  // Every minute (UTC), besides the fires the soak asks for now.
  const triggerId = (
    await post<{ triggerId: string }>('/schedules', {
      name: 'Soak tick',
      cronExpression: '* * * * *',
      confirmHighFrequency: true,
    })
  ).triggerId;
  await post(`/schedules/${triggerId}/handlers`, {
    handlerType: 'workflow',
    workflowId: scheduleChainId,
    instructions: 'Tick',
    inputMapping: { message: 'tick' },
  });

  const knowledgeBaseId = (
    await post<{ knowledgeBaseId: string }>('/knowledgebases', {
      title: 'Soak files',
      llmDescription: 'files the soak uploads',
      type: 'ORGANIZATION',
    })
  ).knowledgeBaseId;
  for (const table of [ROWS_TABLE, APP_TABLE])
    await post('/tables', {
      name: table,
      fields: [
        { name: 'n', type: 'numeric', required: true, comments: 'the write number' },
        { name: 'note', type: 'text', required: false, comments: 'a note' },
      ],
    });

  const manifest = { workflows: [appChainId], tables: [{ table: APP_TABLE, access: 'write' }] };
  const html =
    '<!doctype html><html><head><title>soak</title>' +
    `<script type="text/plain" data-file="service.manifest.ts">\nexport default ${JSON.stringify(manifest)};\n</script>` +
    '</head><body><h1>Soak app</h1></body></html>';
  const artifactId = (
    await post<{ artifact: { artifactId: string } }>('/artifacts', {
      name: 'Soak app',
      contentType: 'text/html',
      content: html,
    })
  ).artifact.artifactId;
  await put(`/artifacts/${artifactId}/pin`);
  await put(`/artifacts/${artifactId}/app-manifest`, {});
  /** A fresh app link's bridge token (each lives APP_SESSION_TTL_SECONDS, an hour by default). */
  const openApp = async () => {
    const { url } = await post<{ url: string }>(`/artifacts/${artifactId}/app-session`);
    return new URL(url).searchParams.get('session')!;
  };

  return {
    name,
    orgId,
    key,
    path,
    agentId,
    fanOutChainId,
    hookChainId,
    scheduleChainId,
    appChainId,
    webhookId,
    triggerId,
    knowledgeBaseId,
    artifactId,
    openApp,
  };
}

export type SoakOrg = Awaited<ReturnType<typeof setUpOrg>>;
