// A tiny chat client: sends one message to an agent and prints the reply as it streams.
//
//   node examples/chat-client.mjs --org ORG_ID --token TOKEN --agent default-assistant "Hello!"
//
// TOKEN is a session token, an assume-role token or an API key (see README, "Getting credentials").
// BASE_URL defaults to http://127.0.0.1:3000. Needs the repository's node_modules (socket.io-client).
import { parseArgs } from 'node:util';
import { io } from 'socket.io-client';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { org: { type: 'string' }, token: { type: 'string' }, agent: { type: 'string' } },
});
const baseUrl = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const message = positionals.join(' ');
if (!values.org || !values.token || !values.agent || !message) {
  console.error('usage: node examples/chat-client.mjs --org ORG --token TOKEN --agent AGENT_ID "message"');
  process.exit(2);
}

// Connect first, so no delta of the reply is missed.
const socket = io(baseUrl, {
  transports: ['websocket'],
  auth: { token: values.token, organizationId: values.org },
});
await new Promise((resolve, reject) => {
  socket.once('connect', resolve);
  socket.once('connect_error', reject);
});

const res = await fetch(`${baseUrl}/orgs/${values.org}/conversations`, {
  method: 'POST',
  headers: { authorization: `Bearer ${values.token}`, 'content-type': 'application/json' },
  body: JSON.stringify({ agentId: values.agent, message }),
});
const conversation = await res.json();
if (!res.ok) {
  console.error(conversation.error);
  process.exit(1);
}

let attempt = 1;
socket.on('tool-update', (e) => {
  if (e.requestId === conversation.requestId) process.stderr.write(`\n[tool ${e.name}: ${e.status}]\n`);
});
socket.on('conversation', (e) => {
  if (e.requestId !== conversation.requestId) return;
  if (e.type === 'delta') {
    // A retried model call streams again from the start.
    if (e.attempt !== attempt) {
      attempt = e.attempt;
      process.stdout.write('\n[retrying]\n');
    }
    process.stdout.write(e.text);
  } else if (e.type === 'tool_call' && e.executor === 'frontend') {
    // This client offers no frontend tools; a real client would run the tool and answer like this:
    socket.emit('frontend-tool-result', {
      conversationId: e.conversationId,
      requestId: e.requestId,
      toolCallId: e.toolCallId,
      result: { error: 'unsupported' },
    });
  } else if (e.type === 'message' || e.type === 'error') {
    process.stdout.write(`\n\n[${e.type}] conversation ${conversation.conversationId}\n`);
    socket.close();
  }
});
