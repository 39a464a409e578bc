import { ApplicationFailure } from '@temporalio/activity';
import { FAILURES } from '@contracts';
import { BlockedAddressError, type OutboundClient } from '@lib/http/outbound';

const CALLBACK_LIMITS = { timeoutMs: 10_000, maxBodyBytes: 4096 };

export function createCallbackActivities(deps: { outbound: OutboundClient }) {
  return {
    /**
     * POSTs the turn's outcome to the caller's callbackUrl; any non-2xx answer is retried. A retry after a worker
     * died past the POST sends it again: `Idempotency-Key` (the turn's requestId) lets the receiver tell.
     */
    async postCallback(input: {
      url: string;
      payload: Record<string, unknown>;
    }): Promise<{ status: number }> {
      let res;
      try {
        res = await deps.outbound.request(
          input.url,
          {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'user-agent': 'agent-workspace-callback/1',
              ...(typeof input.payload.requestId === 'string' && {
                'idempotency-key': input.payload.requestId,
              }),
            },
            body: JSON.stringify(input.payload),
          },
          CALLBACK_LIMITS,
        );
      } catch (err) {
        if (err instanceof BlockedAddressError) {
          throw ApplicationFailure.nonRetryable(
            `callbackUrl refused: ${err.message}`,
            FAILURES.callbackRefused,
          );
        }
        throw err;
      }
      if (res.status < 200 || res.status >= 300) throw new Error(`callback answered ${res.status}`);
      return { status: res.status };
    },
  };
}
