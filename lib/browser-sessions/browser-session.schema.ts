import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** active → stopped (POST stop, or its owner ended), expired (idle timeout) or failed (Chromium or its worker
 * died); the last three are final. */
export const SESSION_STATUSES = ['active', 'stopped', 'expired', 'failed'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export const OWNER_TYPES = ['conversation', 'chain_run'] as const;

/** Who a session belongs to: a conversation, or one run of an action chain. */
export type SessionOwner =
  | { type: 'conversation'; conversationId: string }
  | { type: 'chain_run'; actionChainId: string; runId: string };

const screenshotSchema = new Schema(
  {
    screenshotId: { type: String, required: true },
    /** The object in S3 (`browser-sessions/<org>/<sessionId>/<screenshotId>.png`). */
    key: { type: String, required: true },
    /** The page the screenshot shows. */
    pageUrl: { type: String, default: null },
    takenAt: { type: Date, required: true },
  },
  { _id: false },
);

/**
 * One headless Chromium session. Its browser lives in one worker process; this record is what the API lists
 * and what outlives the process (see docs/agents.md, "Browser sessions").
 */
export const browserSessionSchema = new Schema(
  {
    /** The sessionId (`bws_…`). */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    ownerType: { type: String, enum: OWNER_TYPES, required: true },
    conversationId: { type: String, default: null },
    actionChainId: { type: String, default: null },
    runId: { type: String, default: null },
    status: { type: String, enum: SESSION_STATUSES, required: true },
    startedAt: { type: Date, required: true },
    lastActivityAt: { type: Date, required: true },
    endedAt: { type: Date, default: null },
    endReason: { type: String, default: null },
    currentUrl: { type: String, default: null },
    screenshots: { type: [screenshotSchema], default: [] },
    /** The worker-specific task queue of the worker whose Chromium this is (null until it launched). */
    taskQueue: { type: String, default: null },
  },
  { versionKey: false },
);
// Serves: a conversation's sessions (GET browser-sessions), the active ones of an owner (browse tool, owner end).
browserSessionSchema.index({ organizationId: 1, conversationId: 1, status: 1 });
// Serves: a chain run's sessions (GET …/runs/{runId}/browser-sessions) and their end with the run.
browserSessionSchema.index({ organizationId: 1, runId: 1, status: 1 });

export type BrowserSessionDoc = DocOf<typeof browserSessionSchema>;
export const browserSessionModel = defineModel('BrowserSession', 'browser_sessions', browserSessionSchema);

/**
 * The organization's concurrent-session slots: `_id` `<organizationId>:<n>` for n below the limit. A session
 * holds one while it is active. Claiming is an insert on the unique `_id`, so two creates racing for the last
 * slot cannot both win (no transactions, no count-then-insert race).
 */
export const browserSlotSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    sessionId: { type: String, required: true },
  },
  { versionKey: false },
);
// Serves: releasing the slot of a session that ended.
browserSlotSchema.index({ organizationId: 1, sessionId: 1 });

export type BrowserSlotDoc = DocOf<typeof browserSlotSchema>;
export const browserSlotModel = defineModel('BrowserSessionSlot', 'browser_session_slots', browserSlotSchema);
