import { ApplicationFailure } from '@temporalio/activity';
import { FAILURES } from '@contracts';
import { BlockedAddressError } from '@lib/http/outbound';
import { SECRET_PROPERTIES } from '../secret-properties';
import { ALLOWED_HOSTS_SCHEMA, HEADER_NAME_PATTERN, type ToolSpec } from '../tool-spec';

export interface HttpRequestConfig {
  allowedHosts: string[];
  methods: string[];
  headers?: Record<string, string>;
  timeoutMs: number;
}

/** What the model gets back of a response body. */
const MAX_BODY_CHARS = 20_000;

function hostAllowed(host: string, allowed: string[]): boolean {
  return allowed.some((pattern) =>
    pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) : host === pattern,
  );
}

const refuse = (message: string) => ApplicationFailure.nonRetryable(message, FAILURES.toolInput);

export const httpRequestTool: ToolSpec<HttpRequestConfig> = {
  toolCode: 'http_request',
  name: 'Outbound HTTP request',
  description:
    'Lets the agent call HTTP(S) APIs on the allowed hosts only. A host entry is a DNS name or `*.example.com` ' +
    '(any subdomain). Whatever the host, requests to private, loopback, link-local and other non-public ' +
    'addresses are refused when the request is made (after DNS resolution), so an allowed name that ' +
    'resolves to an internal address is still blocked. The configured headers (for example an API key) ' +
    'are added to every request and are never shown to the model.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['allowedHosts'],
    properties: {
      allowedHosts: ALLOWED_HOSTS_SCHEMA,
      methods: {
        type: 'array',
        minItems: 1,
        maxItems: 6,
        uniqueItems: true,
        items: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] },
        default: ['GET'],
      },
      headers: {
        type: 'object',
        maxProperties: 20,
        propertyNames: { pattern: HEADER_NAME_PATTERN },
        additionalProperties: { type: 'string', maxLength: 4000 },
      },
      timeoutMs: { type: 'integer', minimum: 100, maximum: 60000, default: 10000 },
    },
  },
  secretProperties: SECRET_PROPERTIES.http_request,
  model: {
    description: 'Make an HTTP request to an allowed host',
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'Absolute http(s) URL on an allowed host' },
        method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        body: { type: 'string', description: 'Request body (text or JSON text)' },
      },
      required: ['url'],
    },
  },
  /** An outbound request limited to the attachment's allow-list and methods, never to private addresses. */
  async run({ config }, args, { outbound }) {
    const method = (typeof args.method === 'string' ? args.method : 'GET').toUpperCase();
    let url: URL;
    try {
      // No DNS before the allow-list: a host the tool may not call is never even resolved.
      url = outbound.parse(String(args.url));
    } catch (err) {
      if (err instanceof BlockedAddressError) throw refuse(err.message);
      throw err;
    }
    if (!hostAllowed(url.hostname, config.allowedHosts)) {
      throw refuse(`host ${url.hostname} is not in this tool's allowedHosts`);
    }
    if (!config.methods.map((m) => m.toUpperCase()).includes(method)) {
      throw refuse(`method ${method} is not allowed by this tool (allowed: ${config.methods.join(', ')})`);
    }
    const headers = { ...(args.headers as Record<string, string> | undefined), ...config.headers };
    let res;
    try {
      res = await outbound.request(
        url.href,
        {
          method,
          headers,
          body: method === 'GET' || method === 'DELETE' ? undefined : (args.body as string),
        },
        { timeoutMs: config.timeoutMs, maxBodyBytes: MAX_BODY_CHARS * 4 },
      );
    } catch (err) {
      // The name resolved to an address the service must not reach: the same call will never succeed.
      if (err instanceof BlockedAddressError) throw refuse(err.message);
      throw err;
    }
    const long = res.truncated || res.body.length > MAX_BODY_CHARS;
    return {
      status: res.status,
      contentType: res.contentType,
      body: long ? `${res.body.slice(0, MAX_BODY_CHARS)}…(truncated)` : res.body,
    };
  },
};
