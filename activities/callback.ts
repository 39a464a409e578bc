import { ApplicationFailure } from '@temporalio/activity';
import { assertPublicUrl, BlockedAddressError } from '@lib/outbound';

export function createCallbackActivities(deps: { allowPrivateOutbound: boolean }) {
  return {
    /** POSTs the turn's outcome to the caller's callbackUrl; any non-2xx answer is retried. */
    async postCallback(input: {
      url: string;
      payload: Record<string, unknown>;
    }): Promise<{ status: number }> {
      try {
        await assertPublicUrl(input.url, deps.allowPrivateOutbound);
      } catch (err) {
        if (err instanceof BlockedAddressError || err instanceof TypeError) {
          throw ApplicationFailure.nonRetryable(`callbackUrl refused: ${err.message}`, 'CallbackRefused');
        }
        throw err;
      }
      const res = await fetch(input.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'agent-workspace-callback/1' },
        body: JSON.stringify(input.payload),
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
      });
      if (res.status < 200 || res.status >= 300) throw new Error(`callback answered ${res.status}`);
      return { status: res.status };
    },
  };
}
