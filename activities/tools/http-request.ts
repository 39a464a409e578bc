import { ApplicationFailure } from '@temporalio/activity';
import { assertPublicUrl, BlockedAddressError } from '@lib/outbound';

export interface HttpRequestConfig {
  allowedHosts: string[];
  methods?: string[];
  headers?: Record<string, string>;
  timeoutMs?: number;
}

const MAX_BODY_CHARS = 20_000;

export const httpRequestParameters = {
  type: 'object',
  properties: {
    url: { type: 'string', description: 'Absolute http(s) URL on an allowed host' },
    method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    body: { type: 'string', description: 'Request body (text or JSON text)' },
  },
  required: ['url'],
};

function hostAllowed(host: string, allowed: string[]): boolean {
  return allowed.some((pattern) =>
    pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) : host === pattern,
  );
}

/** An outbound request limited to the attachment's allow-list and never to private addresses. */
export async function httpRequest(
  config: HttpRequestConfig,
  args: { url: string; method?: string; headers?: Record<string, string>; body?: string },
  allowPrivate: boolean,
) {
  const method = (args.method ?? 'GET').toUpperCase();
  let url: URL;
  try {
    url = await assertPublicUrl(args.url, allowPrivate);
  } catch (err) {
    if (err instanceof BlockedAddressError || err instanceof TypeError)
      throw ApplicationFailure.nonRetryable(err.message, 'ToolInputError');
    throw err;
  }
  if (!hostAllowed(url.hostname, config.allowedHosts)) {
    throw ApplicationFailure.nonRetryable(
      `host ${url.hostname} is not in this tool's allowedHosts`,
      'ToolInputError',
    );
  }
  if (config.methods?.length && !config.methods.map((m) => m.toUpperCase()).includes(method)) {
    throw ApplicationFailure.nonRetryable(`method ${method} is not allowed`, 'ToolInputError');
  }
  const res = await fetch(url, {
    method,
    headers: { ...args.headers, ...config.headers },
    body: method === 'GET' || method === 'DELETE' ? undefined : args.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(config.timeoutMs ?? 15_000),
  });
  const text = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    body: text.length > MAX_BODY_CHARS ? `${text.slice(0, MAX_BODY_CHARS)}…(truncated)` : text,
  };
}
