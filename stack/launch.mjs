// How the API and the worker are launched: `npm start` (stack/start.mjs) and the benches that run them as processes
// (bench/lib/service-processes.ts) use these; the Dockerfile, docker-compose.yml and deploy/kubernetes spell the
// same commands out, and lint checks that they do (stack/check-deploy.mjs).
//
// Node 24 sizes V8's young generation from the machine's memory (64 MB semi-spaces on 24 GiB), which costs each
// process about 100 MB of RSS for nothing measurable here; 16 MB is what Node 20 used. V8 also lets the old
// generation grow to several times its live size between full collections: 40% at most keeps the API near 210 MB
// under a steady read load instead of 330 MB, at the same request rate.
const HEAP = ['--max-semi-space-size=16', '--heap-growing-percent=40'];

// The API turns source maps on itself, for its own modules only (api/source-maps.ts); the worker keeps the flag,
// which also maps the stack traces of the workflow bundle.
export const API_NODE_FLAGS = HEAP;
export const WORKER_NODE_FLAGS = ['--enable-source-maps', ...HEAP];

// glibc gives every thread that allocates (V8's background GC and compiler threads, libuv's pool) a malloc arena of
// its own, and keeps what each one frees: under the read bench that held about 30 MB of the API's peak RSS, for no
// difference in requests per second with one arena. The worker is left as it is: its native parts (Temporal's
// core, the local models) allocate from many threads at once.
export const API_ENV = { MALLOC_ARENA_MAX: '1' };
