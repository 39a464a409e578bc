import { ApplicationFailure, sleep } from '@temporalio/workflow';
import { FAILURES, type IngestFileInput, type IngestFileResult } from '@contracts';
import { failureReason } from './agent-loop';
import { embedding, kbStore, parsing, uploads } from './kb-activity-proxies';

/** Chunks per embedding activity: big enough to batch the model's calls, small enough to retry cheaply. */
export const EMBED_BATCH = 128;
/** The upload wait polls the object store at growing intervals, up to this. */
const MAX_POLL_INTERVAL_MS = 30_000;

function causeType(err: unknown): string | undefined {
  let e = err as { cause?: unknown; type?: string } | undefined;
  while (e) {
    if (e instanceof ApplicationFailure) return e.type ?? undefined;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** What a person reads in statusMessage when a step failed for good. */
function statusMessageOf(err: unknown): string {
  const reason = failureReason(err);
  const type = causeType(err);
  if (type === FAILURES.fileUnparseable) return reason;
  if (type === FAILURES.embeddingRejected) return `the embedding model refused the file's text: ${reason}`;
  return `processing failed after several attempts (${reason}); reindex the file to try again`;
}

/**
 * One ingestion run of one generation of a file: wait for its bytes (durable timers), then
 * ENQUEUED → PROCESSING (parse and chunk, or copy from the source file) → embed in batches → READY → ETL rules.
 * Every failure ends in ERROR with a statusMessage; a run whose file was deleted or reindexed stops quietly.
 * Id: workflowIds.ingestFile.
 */
export async function ingestFileWorkflow(input: IngestFileInput): Promise<IngestFileResult> {
  try {
    let counts: { chunkCount: number; pageCount: number | null };
    if (input.copyOf) {
      counts = await parsing.copyFromSource(input);
    } else {
      const deadline = new Date(input.uploadDeadline).getTime();
      let wait = 1_000;
      for (;;) {
        const upload = await uploads.checkUpload(input);
        if (upload.state === 'present') {
          await kbStore.markEnqueued(input, upload.sizeBytes);
          break;
        }
        if (Date.now() >= deadline) {
          const statusMessage =
            'no upload arrived before the upload URL expired; reindex the file for a new wait, or create a new upload URL';
          await kbStore.markError(input, statusMessage);
          return { status: 'ERROR', statusMessage };
        }
        await sleep(Math.min(wait, Math.max(deadline - Date.now(), 1)));
        wait = Math.min(wait * 2, MAX_POLL_INTERVAL_MS);
      }
      counts = await parsing.parseFile(input);
    }
    for (let from = 0; from < counts.chunkCount; from += EMBED_BATCH) {
      await embedding.embedChunks({ ...input, from, to: Math.min(counts.chunkCount, from + EMBED_BATCH) });
    }
    await kbStore.markReady(input, counts);
  } catch (err) {
    if (causeType(err) === FAILURES.fileSuperseded) return { status: 'superseded' };
    const statusMessage = statusMessageOf(err);
    await kbStore.markError(input, statusMessage);
    return { status: 'ERROR', statusMessage };
  }
  await kbStore.runEtlRules(input);
  return { status: 'READY' };
}
