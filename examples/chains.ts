// Action chains: creates a two-step chain (classify, then draft a reply), runs it and prints the final state.
//
//   npx tsx examples/chains.ts --org "$ORG" --token "$KEY" "My invoice shows the wrong amount."
import { connect, must, run, sleep } from './connect';

async function main() {
  const { positionals, client, org } = connect('chains', [], '"support message"');
  const chain = must(
    await client.POST('/orgs/{organizationId}/chains', {
      params: { path: org },
      body: {
        name: `Support triage ${Date.now()}`,
        description: 'Classifies a support message and drafts a reply',
        llmInstructions: 'You work in customer support. Be brief.',
        steps: [
          {
            stepOrder: 1,
            instructions: 'Classify this message: {{input.message}}',
            inputSchema: {
              type: 'object',
              properties: { message: { type: 'string' } },
              required: ['message'],
            },
            outputSchema: {
              type: 'object',
              properties: { category: { type: 'string', enum: ['billing', 'bug', 'other'] } },
              required: ['category'],
            },
          },
          {
            stepOrder: 2,
            instructions: 'Draft a reply to this {{category}} message: {{input.message}}',
            outputSchema: { type: 'object', properties: { reply: { type: 'string' } }, required: ['reply'] },
          },
        ],
      },
    }),
  );
  const inChain = { ...org, actionChainId: chain.actionChainId };
  // Runs are asynchronous: the POST answers 202 with the run's id.
  const { runId } = must(
    await client.POST('/orgs/{organizationId}/chains/{actionChainId}/run', {
      params: { path: inChain },
      body: { payload: { message: positionals.join(' ') || 'My invoice shows the wrong amount.' } },
    }),
  );
  for (;;) {
    const runNow = must(
      await client.GET('/orgs/{organizationId}/chains/{actionChainId}/runs/{runId}', {
        params: { path: { ...inChain, runId } },
      }),
    );
    if (runNow.status === 'success' || runNow.status === 'failed') {
      console.log(runNow.status, runNow.statusMessage ?? '', runNow.state);
      // A failed run fails the example, so a script that runs it stops there.
      if (runNow.status === 'failed') process.exitCode = 1;
      return;
    }
    await sleep(1000);
  }
}

run(main);
