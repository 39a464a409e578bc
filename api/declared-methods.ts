import { specOperations } from './operations';

const escape = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface PathMethods {
  pattern: RegExp;
  literals: number;
  methods: Set<string>;
}

/**
 * Whether openapi.yaml declares a method at the path a URL names (Express's default matching: case-insensitive,
 * a parameter is one segment, one trailing slash allowed; where several paths match, the one with the most
 * literal segments, as the validator chooses `…/data/batch` over `…/data/{id}`). The body parsers run before the
 * validator, so a request whose method its path does not declare must not reach them: its answer is the
 * validator's 405 with Allow, whatever its body holds.
 */
export function methodDeclaredAt(): (method: string, url: string) => boolean {
  const paths = new Map<string, PathMethods>();
  for (const op of specOperations()) {
    const segments = op.path.split('/');
    const entry = paths.get(op.path) ?? {
      pattern: new RegExp(
        `^${segments.map((s) => (s.startsWith(':') ? '[^/]+' : escape(s))).join('/')}/?$`,
        'i',
      ),
      literals: segments.filter((s) => !s.startsWith(':')).length,
      methods: new Set<string>(),
    };
    entry.methods.add(op.method.toUpperCase());
    paths.set(op.path, entry);
  }
  const all = [...paths.values()].sort((a, b) => b.literals - a.literals);
  return (method, url) => {
    const path = url.split('?')[0]!;
    return all.find((p) => p.pattern.test(path))?.methods.has(method) ?? false;
  };
}
