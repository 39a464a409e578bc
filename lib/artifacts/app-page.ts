import type { AppManifest } from './app-manifest';

/** JSON that is also safe inside an inline <script> (no `</script>`, no line separators JS would choke on). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * The Content-Security-Policy of a served app. `sandbox` (without allow-same-origin) gives the page an
 * opaque origin of its own whether it is opened in a frame or on its own: no cookies or storage of the API's
 * origin. Only inline code and styles run (nothing is loaded from anywhere), and the only address it can
 * reach is the API (`connect-src`), where every call is checked against the approved manifest.
 */
export function appContentSecurityPolicy(apiOrigin: string, frameAncestors: string): string {
  return [
    'sandbox allow-scripts allow-forms allow-modals allow-downloads',
    "default-src 'none'",
    "script-src 'unsafe-inline'",
    "style-src 'unsafe-inline'",
    'img-src data: blob:',
    'font-src data:',
    'media-src data: blob:',
    `connect-src ${apiOrigin}`,
    "form-action 'none'",
    "base-uri 'none'",
    "frame-src 'none'",
    "worker-src 'none'",
    "object-src 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');
}

/**
 * The `window.service` bridge: calls the app API with the app link's token. It decides nothing: the API
 * allows a call only when the version's approved manifest does.
 */
export function bridgeScript(opts: { appApiBase: string; token: string; manifest: AppManifest | null }) {
  return `<script>(() => {
  const base = ${scriptJson(opts.appApiBase)};
  const token = ${scriptJson(opts.token)};
  const call = async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: body === undefined
        ? { Authorization: 'Bearer ' + token }
        : { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      const err = new Error((data && data.error && data.error.message) || 'HTTP ' + res.status);
      err.code = data && data.error ? data.error.code : undefined;
      err.status = res.status;
      throw err;
    }
    return data;
  };
  const seg = (s) => encodeURIComponent(String(s));
  const service = Object.freeze({
    manifest: Object.freeze(${scriptJson(opts.manifest)}),
    tables: Object.freeze({
      query(table, opts = {}) {
        const q = new URLSearchParams();
        for (const k of ['filters', 'orderBy', 'limit', 'offset']) if (opts[k] !== undefined) q.set(k, String(opts[k]));
        const qs = q.toString();
        return call('GET', '/tables/' + seg(table) + '/rows' + (qs ? '?' + qs : ''));
      },
      insert(table, rows) {
        return call('POST', '/tables/' + seg(table) + '/rows', { rows: Array.isArray(rows) ? rows : [rows] });
      },
    }),
    workflows: Object.freeze({
      run(workflowId, input = {}) {
        return call('POST', '/workflows/' + seg(workflowId) + '/runs', { input });
      },
    }),
  });
  Object.defineProperty(window, 'service', { value: service, enumerable: true });
  document.currentScript && document.currentScript.remove();
})();</script>`;
}

/** The page with the bridge placed before anything of its own runs (after a leading doctype, if any). */
export function withBridge(html: string, script: string): string {
  const doctype = /^\uFEFF?\s*<!doctype[^>]*>/i.exec(html);
  const at = doctype ? doctype[0].length : 0;
  return html.slice(0, at) + script + html.slice(at);
}
