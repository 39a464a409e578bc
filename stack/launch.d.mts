export declare const API_NODE_FLAGS: string[];
export declare const WORKER_NODE_FLAGS: string[];
export declare const API_ENV: Record<string, string>;
