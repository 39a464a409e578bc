import { proxyActivities } from '@temporalio/workflow';
import { FAILURES } from '@contracts';
import type { AnalysisActivities } from './activity-types';

const permanent = [FAILURES.analysisSuperseded, FAILURES.analysisFailed];

// The analysis record and its result artifact (our database and S3): short, retried quickly.
export const analysisStore = proxyActivities<AnalysisActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: permanent,
  },
});

// One model call: the heartbeat notices a dead worker; 429/5xx/timeouts retry with backoff, a request the
// model rejects (4xx) and used-up credits do not.
export const analysisModel = proxyActivities<AnalysisActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 6,
    nonRetryableErrorTypes: [...permanent, FAILURES.llmRequestRejected],
  },
});

// Reading tables and searching knowledge bases on the analysis's behalf.
export const analysisTools = proxyActivities<AnalysisActivities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumAttempts: 3,
    nonRetryableErrorTypes: permanent,
  },
});
