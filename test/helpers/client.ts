import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { connectRealtime, createClient, type AgentWorkspaceClient } from '@client';
import type { TestEnv } from './env';
import type { ScriptedReply } from './llm';
import type { TestOrg } from './org';
import { useWorkerAndOrg } from './worker';

/** The data of a call that succeeded; a call that failed fails the test with the server's error. */
export function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  expect(result.error, `${result.response.status} ${JSON.stringify(result.error)}`).to.equal(undefined);
  return result.data as T;
}

export interface ClientSuite {
  env: TestEnv;
  org: TestOrg;
  /** the API (with socket.io) on a loopback port */
  baseUrl: string;
  /** the generated client (clients/typescript) as the organization's owner */
  client: AgentWorkspaceClient;
  /** the organization as the `organizationId` path parameter */
  inOrg: { organizationId: string };
}

/** Mocha hooks: a worker for the suite, and for every test a fresh organization and the client of its owner. */
export function useClientAndOrg(orgName: string): ClientSuite {
  const suite = useWorkerAndOrg(orgName);
  const current = {} as ClientSuite;
  beforeEach(async () => {
    const baseUrl = (await suite.env.listen()).url;
    Object.assign(current, {
      env: suite.env,
      org: suite.org,
      baseUrl,
      client: createClient({ baseUrl, token: suite.org.owner.token }),
      inOrg: { organizationId: suite.org.organizationId },
    });
  });
  return current;
}

/** An agent created through the client whose model (a name of its own) the scripted LLM answers with `reply`. */
export async function createScriptedAgent({ env, client, inOrg }: ClientSuite, reply: ScriptedReply) {
  const model = `client-model-${randomBytes(4).toString('hex')}`;
  env.llm.on({ model }, reply);
  return ok(
    await client.POST('/orgs/{organizationId}/agents', {
      params: { path: inOrg },
      body: {
        name: 'Client agent',
        description: 'answers the client tests',
        instructions: 'Be brief.',
        model,
      },
    }),
  );
}

/** The typed socket of the organization's owner. */
export function connectOwner({ baseUrl, org }: ClientSuite) {
  return connectRealtime({ baseUrl, token: org.owner.token, organizationId: org.organizationId });
}
