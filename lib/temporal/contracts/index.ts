// Workflow contracts: names, ids, inputs, messages and failure types shared by the API, the worker's
// activities and the workflows. Pure types and constants (no runtime imports), so it is safe everywhere,
// including the workflow sandbox.
export * from './analyses';
export * from './browser';
export * from './chains';
export * from './conversations';
export * from './email';
export * from './ids';
export * from './invitation';
export * from './knowledge-bases';
export * from './names';
export * from './search-attributes';
export * from './triggers';
