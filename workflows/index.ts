// The worker's workflowsPath barrel: every workflow the worker runs is exported here.
export * from './invitation';
export * from './turn';
export * from './agent-call';
