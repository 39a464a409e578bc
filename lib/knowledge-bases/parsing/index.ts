// The parsing and chunking entry points the knowledge-base ingestion uses.
export { parseDocument } from './parse';
export { createVisionReader } from './vision';
export { chunkSegments, DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE } from './chunk';
export { SUPPORTED_EXTENSIONS, fileExtension, isPlausibleContentType, isSupportedFile } from './extensions';
export { DEFAULT_PARSE_LIMITS, LIMIT_VARIABLES, LimitExceeded } from './limits';
export { ParseSandbox } from './sandbox';
export * from './types';
