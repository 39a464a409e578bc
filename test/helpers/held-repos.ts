import type { Repositories, TenantRepositories } from '@lib/repositories';

/**
 * The repositories with one method of one tenant repository held back: each call for which `holds(args)` is true
 * waits until `release()` (those calls are in `held`); every other call goes through at once.
 */
export function holdBack<R extends keyof TenantRepositories>(
  repos: Repositories,
  repository: R,
  method: keyof TenantRepositories[R] & string,
  holds: (args: unknown[]) => boolean = () => true,
) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held: Array<Promise<unknown>> = [];
  const tenant = (organizationId: string) => {
    const real = repos.tenant(organizationId);
    const target = real[repository] as object;
    const wrapped = new Proxy(target, {
      get: (t, name): unknown => {
        const value = Reflect.get(t, name) as unknown;
        if (name !== method || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (!holds(args)) return value.apply(t, args) as unknown;
          const call = gate.then(() => value.apply(t, args) as unknown);
          held.push(call);
          return call;
        };
      },
    });
    return new Proxy(real, {
      get: (t, name): unknown => (name === repository ? wrapped : Reflect.get(t, name)),
    });
  };
  const heldRepos = new Proxy(repos, {
    get: (t, key): unknown => (key === 'tenant' ? tenant : Reflect.get(t, key)),
  });
  return { repos: heldRepos, release, held };
}
