// The worker's workflowsPath barrel: every workflow the worker runs is exported here.
export * from './invitation';
export * from './turn';
export * from './agent-call';
export * from './ingest-file';
export * from './purge-knowledge';
export * from './copy-knowledge-base';
export * from './inbound-email';
export * from './chain-run';
export * from './chain-fan-out';
export * from './schedule-fire';
export * from './trigger-handler';
export * from './reconcile-schedules';
export * from './webhook-delivery';
export * from './analysis';
export * from './browser-session';
