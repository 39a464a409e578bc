import vm from 'node:vm';
import type { WorkerOptions } from '@temporalio/worker';

type StrykerNamespace = Record<string, unknown>;
let sandboxesShareIt = false;

/**
 * Worker options that let StrykerJS (`npm run mutate`) see into workflow sandboxes; none otherwise.
 *
 * Stryker switches mutants on through `globalThis.__stryker__`, and collects per-test coverage there. Workflow
 * code runs in a V8 sandbox with globals of its own, so under Stryker workflows run in this thread, one fresh
 * sandbox each, and every sandbox gets the test process's `__stryker__` object as a global.
 */
export function mutationTestingWorkerOptions(): Pick<WorkerOptions, 'debugMode' | 'reuseV8Context'> {
  const stryker = (globalThis as { __stryker__?: StrykerNamespace }).__stryker__;
  if (!stryker) return {};
  if (!sandboxesShareIt) {
    const createContext = vm.createContext;
    vm.createContext = ((context: vm.Context = {}, options?: vm.CreateContextOptions) => {
      (context as { __stryker__?: StrykerNamespace }).__stryker__ = stryker;
      return createContext(context, options);
    }) as typeof vm.createContext;
    sandboxesShareIt = true;
  }
  return { debugMode: true, reuseV8Context: false };
}
