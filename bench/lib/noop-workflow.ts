// The baseline of bench/webhooks.ts and bench/turns.ts: the smallest durable unit of work, a workflow that
// starts and completes.
export async function bareNoopWorkflow(n: number): Promise<number> {
  return Promise.resolve(n);
}
