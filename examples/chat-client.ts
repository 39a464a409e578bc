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

  let attempt = 1;
  socket.on('tool-update', (e) => {
    if (e.requestId === turn.requestId) process.stderr.write(`\n[tool ${e.name}: ${e.status}]\n`);
  });
  socket.on('conversation', (e) => {
    if (e.requestId !== turn.requestId) return;
    if (e.type === 'delta') {
      // A retried model call streams again from the start.
      if (e.attempt !== attempt) {
        attempt = e.attempt;
        process.stdout.write('\n[retrying]\n');
      }
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
