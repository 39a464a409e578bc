// A tiny chat client: sends one message to an agent and prints the reply as it streams.
//
//   npx tsx examples/chat-client.ts --org "$ORG" --token "$KEY" --agent "$AGENT" "Hello!"
import { connectRealtime } from '../clients/typescript/src';
import { connect, must, run } from './connect';

async function main() {
  const { args, baseUrl, positionals, client, org } = connect('chat-client', ['agent'], '"message"');
  const message = positionals.join(' ');
  // Connect first, so no delta of the reply is missed.
  const socket = await connectRealtime({ baseUrl, token: args.token, organizationId: args.org });
  const turn = must(
    await client.POST('/orgs/{organizationId}/conversations', {
      params: { path: org },
      body: { agentId: args.agent, message },
    }),
  );

  // The text shown is the latest model call's (round), from its latest attempt; anything older is dropped.
  let shown = { round: 0, attempt: 1 };
  socket.on('tool-update', (e) => {
    if (e.requestId === turn.requestId) process.stderr.write(`\n[tool ${e.name}: ${e.status}]\n`);
  });
  socket.on('conversation', (e) => {
    if (e.requestId !== turn.requestId) return;
    if (e.type === 'delta') {
      if (e.round < shown.round || (e.round === shown.round && e.attempt < shown.attempt)) return;
      if (e.round > shown.round) process.stdout.write('\n');
      // A retried model call streams its round again from the start.
      else if (e.attempt > shown.attempt) process.stdout.write('\n[retrying]\n');
      shown = { round: e.round, attempt: e.attempt };
      process.stdout.write(e.text);
    } else if (e.type === 'tool_call' && e.executor === 'frontend') {
      // This client offers no frontend tools; a real client would run the tool and answer like this:
      socket.emit(
        'frontend-tool-result',
        {
          conversationId: e.conversationId,
          requestId: e.requestId,
          toolCallId: e.toolCallId,
          result: { error: 'unsupported' },
        },
        () => undefined,
      );
    } else if (e.type === 'message' || e.type === 'error') {
      process.stdout.write(`\n\n[${e.type}] conversation ${turn.conversationId}\n`);
      socket.close();
    }
  });
}

run(main);
