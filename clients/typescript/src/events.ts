// The socket.io events of the service (docs/agents.md, "Realtime events"), typed for a socket.io-client Socket. Written by
// hand: OpenAPI does not describe socket.io. The payloads come from activities/conversations.ts, activities/tools.ts,
// workflows/agent-loop.ts, workflows/turn.ts and lib/task-plans/task-plans.service.ts.
import { io, type Socket } from 'socket.io-client';
import type { components } from './schema';

export type Message = components['schemas']['Message'];
export type TaskPlan = components['schemas']['TaskPlan'];

/** Every event of a turn names its conversation and the request that started the turn. */
interface TurnEvent {
  conversationId: string;
  requestId: string;
}

export type ConversationEvent = TurnEvent &
  (
    | {
        type: 'delta';
        text: string;
        /**
         * The model call within the turn, 0, 1, …: the model is called again after each round of tool calls, and
         * the reply is the last round's text, so a higher round starts the text over.
         */
        round: number;
        /** A retried model call streams its round again from seq 0 with a higher attempt: drop the earlier text. */
        attempt: number;
        /** 0, 1, … within a round's attempt: the text is the deltas in seq order */
        seq: number;
      }
    | {
        type: 'tool_call';
        toolCallId: string;
        name: string;
        /** JSON text, as the model produced it */
        arguments: string;
        executor: 'server' | 'frontend' | 'agent' | 'chain';
      }
    /** The stored reply: the turn's final event when it succeeded. */
    | { type: 'message'; message: Message }
    /** The turn failed: the stored message says why (null, with `error`, when the conversation was deleted). */
    | { type: 'error'; message: Message | null; error?: string }
    /** The callbackUrl could not be reached; the reply itself is stored. */
    | { type: 'callback_failed'; error: string }
  );

export type ToolUpdateEvent = TurnEvent & {
  toolCallId: string;
  name: string;
  status: 'running' | 'completed' | 'failed';
  /** why it failed */
  error?: string;
};

export type TaskPlanEvent = TurnEvent & {
  type: 'created' | 'updated' | 'cancelled';
  plan: TaskPlan;
};

export interface ServerToClientEvents {
  conversation: (event: ConversationEvent) => void;
  'tool-update': (event: ToolUpdateEvent) => void;
  'task-plan': (event: TaskPlanEvent) => void;
}

/** What every client event's acknowledgement answers. */
export type Ack = { ok: true } | { ok: false; error: { code: string; message: string } };

export interface ClientToServerEvents {
  /** Receive the events of a conversation one may read (one's own turns arrive without asking). */
  subscribe: (payload: { conversationId: string }, ack: (answer: Ack) => void) => void;
  unsubscribe: (payload: { conversationId: string }, ack: (answer: Ack) => void) => void;
  /** The result of a frontend tool the agent called in this client. */
  'frontend-tool-result': (
    payload: { conversationId: string; requestId: string; toolCallId: string; result: unknown },
    ack: (answer: Ack) => void,
  ) => void;
}

export type RealtimeSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

/**
 * A typed socket.io connection to the service, authenticated like HTTP. Resolves once connected (connect before
 * starting a turn so no delta is missed); rejects with the server's reason when the credentials are refused.
 */
export function connectRealtime(options: {
  baseUrl: string;
  token: string;
  organizationId: string;
}): Promise<RealtimeSocket> {
  const socket: RealtimeSocket = io(options.baseUrl, {
    // WebSocket only: long polling needs sticky sessions behind a load balancer.
    transports: ['websocket'],
    auth: { token: options.token, organizationId: options.organizationId },
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (err) => {
      socket.close();
      reject(err);
    });
  });
}
