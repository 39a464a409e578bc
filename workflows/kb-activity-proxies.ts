import { proxyActivities } from '@temporalio/workflow';
import { FAILURES } from '@contracts';
import type { KnowledgeBaseActivities } from './activity-types';

const permanent = [FAILURES.fileUnparseable, FAILURES.fileSuperseded, FAILURES.embeddingRejected];

// Reads and writes of file records, chunks and rules: short, retried quickly for a while.
export const kbStore = proxyActivities<KnowledgeBaseActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 20,
    nonRetryableErrorTypes: permanent,
  },
});

// One HeadObject per poll: an object store outage is waited out until the upload deadline's polls resume.
export const uploads = proxyActivities<KnowledgeBaseActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
    nonRetryableErrorTypes: permanent,
  },
});

// Reading and parsing a file (up to the size limit, vision model calls included): long, with a heartbeat so a
// dead worker is noticed within half a minute.
export const parsing = proxyActivities<KnowledgeBaseActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
    maximumAttempts: 5,
    nonRetryableErrorTypes: permanent,
  },
});

// Embedding a batch: a model server's rate limits and outages are retried with growing pauses; the heartbeat
// hands the batch to another worker within 20 seconds when this one dies.
export const embedding = proxyActivities<KnowledgeBaseActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
    maximumAttempts: 10,
    nonRetryableErrorTypes: permanent,
  },
});
