// The typed client of the Agent Workspace Service: HTTP through openapi-fetch over the types generated from
// openapi.yaml (./schema.d.ts), realtime through socket.io (./events).
import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema';

export type { components, operations, paths } from './schema';
export * from './events';

export type AgentWorkspaceClient = Client<paths>;

/**
 * A client whose every call is typed by the contract: `client.GET('/orgs/{org}/tables', { params: { path: { org } } })`
 * answers `{ data }` typed by the 2xx response or `{ error }` typed by the error responses (`{ error: { code,
 * message } }`). `token` is a session token, an assume-role token or an API key.
 */
export function createClient(options: { baseUrl: string; token: string }): AgentWorkspaceClient {
  return createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { Authorization: `Bearer ${options.token}` },
  });
}
