import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** openapi.yaml sits at the repository root: one level above source folders, two above dist/. */
export function openApiSpecPath(): string {
  const candidates = [join(__dirname, '..', 'openapi.yaml'), join(__dirname, '..', '..', 'openapi.yaml')];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error('openapi.yaml not found');
  return found;
}
