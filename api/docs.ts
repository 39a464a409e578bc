import { readFileSync } from 'node:fs';
import { Router, type RequestHandler } from 'express';
import { parse } from 'yaml';
import { openApiSpecPath } from '@lib/spec';

const REDOC_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Agent Workspace Service API</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc><script src="/docs/redoc.standalone.js"></script></body></html>`;

/** The contract and its rendered docs (Redoc, served from node_modules: no CDN). Other paths skip its routes. */
export function docsRouter(): RequestHandler {
  const router = Router();
  const yamlText = readFileSync(openApiSpecPath(), 'utf8');
  const json = parse(yamlText) as unknown;
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(yamlText);
  });
  router.get('/openapi.json', (_req, res) => {
    res.json(json);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(REDOC_HTML);
  });
  router.get('/docs/redoc.standalone.js', (_req, res) => {
    res.sendFile(require.resolve('redoc/bundles/redoc.standalone.js'));
  });
  // Express routes case-insensitively: so does this test.
  const mine = /^\/(openapi\.|docs)/i;
  return (req, res, next) => (mine.test(req.path) ? router(req, res, next) : next());
}
