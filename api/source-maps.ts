import { setSourceMapsSupport } from 'node:module';

// Imported first by api/server.ts: a module's source map is read when the module loads, so this must run before
// the rest. Stack traces then name our TypeScript files, while the source maps that dependencies ship stay
// unread; `--enable-source-maps` read those too and held about 8 MB more heap for the API's whole life (docs/operations.md,
// "Node runtime and process flags"). Node before 22.14 has no per-origin switch and gets every map, as with the flag.
if (typeof setSourceMapsSupport === 'function') {
  setSourceMapsSupport(true, { nodeModules: false, generatedCode: false });
} else {
  process.setSourceMapsEnabled(true);
}
