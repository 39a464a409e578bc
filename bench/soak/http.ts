/**
 * The soak's HTTP client: JSON over fetch (keep-alive), every answer counted by status class, so "no 5xx" covers
 * every call the soak made, set-up and checks included.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: ${status} ${body.slice(0, 300)}`);
  }
}

export interface Answer {
  status: number;
  body: string;
  json: <T = Record<string, unknown>>() => T;
}

export class SoakHttp {
  /** answers by status, e.g. { '200': 812, '429': 3 } */
  readonly statuses: Record<string, number> = {};
  /** the first few 5xx answers, for the report */
  readonly serverErrors: string[] = [];
  /** calls that got no answer at all (connection refused or reset) */
  networkErrors = 0;

  constructor(readonly baseUrl: string) {}

  async call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    token: string | null,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const full = url.startsWith('http') ? url : `${this.baseUrl}${url}`;
    let res: Response;
    try {
      res = await fetch(full, {
        method,
        headers: {
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (err) {
      this.networkErrors++;
      throw err;
    }
    const text = await res.text();
    this.statuses[res.status] = (this.statuses[res.status] ?? 0) + 1;
    if (res.status >= 500 && this.serverErrors.length < 10)
      this.serverErrors.push(`${method} ${url.split('?')[0]} ${res.status} ${text.slice(0, 200)}`);
    return { status: res.status, body: text, json: <T>() => JSON.parse(text) as T };
  }

  /** A call that must answer `expected` (any 2xx when omitted); its JSON body. */
  async json<T = Record<string, unknown>>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    token: string | null,
    body?: unknown,
    expected?: number,
  ): Promise<T> {
    const res = await this.call(method, url, token, body);
    const ok = expected === undefined ? res.status >= 200 && res.status < 300 : res.status === expected;
    if (!ok) throw new HttpError(res.status, res.body, `${method} ${url.split('?')[0]}`);
    return res.json<T>();
  }

  get count5xx(): number {
    return Object.entries(this.statuses)
      .filter(([s]) => Number(s) >= 500)
      .reduce((n, [, c]) => n + c, 0);
  }
}
