import { spawnSync } from 'node:child_process';
import * as nodeModule from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';
import { ROOT } from '@test/helpers/paths';

const COMPILE = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, sourceMap: true };
const THROWER = "export function boom(): never {\n  throw new Error('boom');\n}\n";

/** Writes `<dir>/<name>.js` and its map, compiled from THROWER as `<name>.ts`. */
function writeCompiled(dir: string, name: string) {
  const out = ts.transpileModule(THROWER, { compilerOptions: COMPILE, fileName: `${name}.ts` });
  writeFileSync(join(dir, `${name}.js`), out.outputText);
  writeFileSync(join(dir, `${name}.js.map`), out.sourceMapText ?? '');
}

describe('API source maps (api/source-maps.ts)', () => {
  it('maps stack traces of our own modules to TypeScript and leaves the source maps of dependencies unread', () => {
    const dir = mkdtempSync(join(tmpdir(), 'source-maps-'));
    try {
      const setup = ts.transpileModule(readFileSync(join(ROOT, 'api/source-maps.ts'), 'utf8'), {
        compilerOptions: { ...COMPILE, sourceMap: false },
      });
      writeFileSync(join(dir, 'source-maps.js'), setup.outputText);
      writeCompiled(dir, 'own');
      mkdirSync(join(dir, 'node_modules', 'dep'), { recursive: true });
      writeCompiled(join(dir, 'node_modules', 'dep'), 'index');
      writeFileSync(
        join(dir, 'main.js'),
        [
          "require('./source-maps');",
          "const { findSourceMap } = require('node:module');",
          "const own = require('./own');",
          "require('dep');",
          "let stack = '';",
          'try { own.boom(); } catch (err) { stack = err.stack; }',
          'const mapped = (id) => findSourceMap(require.resolve(id)) !== undefined;',
          "console.log(JSON.stringify({ own: mapped('./own'), dep: mapped('dep'), stack }));",
        ].join('\n'),
      );
      // Plain node, as the API runs in production: no tsx loader, which would turn every source map on.
      const env = { ...process.env };
      delete env.NODE_OPTIONS;
      const run = spawnSync(process.execPath, [join(dir, 'main.js')], { cwd: dir, env, encoding: 'utf8' });
      expect(run.status, run.stderr).to.equal(0);
      const seen = JSON.parse(run.stdout) as { own: boolean; dep: boolean; stack: string };
      expect(seen.own).to.equal(true);
      expect(seen.stack).to.contain(`${join(dir, 'own.ts')}:2:`);
      // Node before 22.14 has no per-origin switch: there every map is read, as api/source-maps.ts says.
      const perOrigin =
        typeof (nodeModule as { setSourceMapsSupport?: unknown }).setSourceMapsSupport === 'function';
      expect(seen.dep).to.equal(!perOrigin);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is the first module the API entry point loads', () => {
    const server = readFileSync(join(ROOT, 'api/server.ts'), 'utf8');
    const firstImport = server.match(/^import\s[^;]*;/m)?.[0];
    expect(firstImport).to.equal("import './source-maps';");
  });
});
