import { expect } from 'chai';
import type { StepAttachmentDoc } from '@lib/chains/step-attachment.schema';
import { loadStepTools, type StepToolDeps } from '@lib/chains/engine/step-tools';
import { findTool } from '@lib/tools/registry';
import type { ToolRunContext } from '@lib/tools/tool-spec';
import { attempt } from './engine-world';

const attach = (kind: string, targetId: string, configJson: string | null = null) =>
  ({ stepId: 'stp_1', kind, targetId, configJson }) as unknown as StepAttachmentDoc;

const runRef = { actionChainId: 'chn_1', runId: 'run_1', startedByUserId: 'usr_1' };

/** Stand-ins of the step tools' ports, keeping what they were asked. */
function toolWorld() {
  const asked = {
    searches: [] as unknown[],
    starts: [] as Array<{ workflowId: string; prompt: string }>,
    /** each start's options */
    startOptions: [] as unknown[],
    reads: 0,
  };
  const deps = {
    knowledgeBases: {
      titlesOf: (_org: string, ids: string[]) => {
        asked.reads++;
        return Promise.resolve(ids.map((id) => `Title ${id}`));
      },
    },
    agents: {
      getMany: (_org: string, ids: string[]) => {
        asked.reads++;
        return Promise.resolve(
          ids.map((agentId) => ({ agentId, name: `Agent ${agentId}`, description: 'helps' })),
        );
      },
    },
    knowledge: {
      searchForStep: (...args: unknown[]) => {
        asked.searches.push(args);
        return Promise.resolve([{ fileName: 'a.pdf', pages: '2', text: 'passage', score: 0.91234 }]);
      },
    },
    temporal: {
      taskQueue: 'q',
      client: {
        workflow: {
          start: (_wf: string, opts: { workflowId: string; args: Array<{ prompt: string }> }) => {
            asked.starts.push({ workflowId: opts.workflowId, prompt: opts.args[0]!.prompt });
            asked.startOptions.push(opts);
            return Promise.resolve();
          },
          getHandle: (id: string) => ({ result: () => Promise.resolve(`answer of ${id}`) }),
        },
      },
    },
  } as unknown as StepToolDeps;
  return { deps, asked };
}

const load = (deps: StepToolDeps, attachments: StepAttachmentDoc[]) =>
  loadStepTools('org_1', attachments, runRef, 'chain-run-org_1-run_1-1-stp_1', deps, attempt());

// docs/chains.md "Attachments": agents (ask_<agentId> tools, answered in the agent's own child workflow),
// knowledge bases (search_knowledge_bases over them) and catalogue tools with their configuration.
describe("a chain step's tools (in memory)", () => {
  it('gives a step without attachments no tools, reading nothing', async () => {
    const { deps, asked } = toolWorld();
    expect((await load(deps, [])).tools).to.deep.equal([]);
    expect(asked.reads).to.equal(0);
  });

  it('searches the attached knowledge bases, and refuses an empty query', async () => {
    const { deps, asked } = toolWorld();
    const tools = await load(deps, [attach('knowledge-base', 'kb_1'), attach('knowledge-base', 'kb_2')]);
    expect(tools.tools.map((t) => t.name)).to.deep.equal(['search_knowledge_bases']);
    expect(tools.tools[0]!.description).to.contain('"Title kb_1", "Title kb_2"');
    const answer = await tools.run({
      id: 'c1',
      name: 'search_knowledge_bases',
      arguments: '{"query":"refunds","limit":3}',
    });
    expect(JSON.parse(answer)).to.deep.equal([{ citation: '[a.pdf, p. 2]', text: 'passage', score: 0.912 }]);
    expect(asked.searches).to.deep.equal([['org_1', ['kb_1', 'kb_2'], 'refunds', 3]]);
    // No agent attached: the agents are not read.
    expect(asked.reads).to.equal(1);
    expect(
      await tools.run({ id: 'c2', name: 'search_knowledge_bases', arguments: '{"query":" "}' }),
    ).to.equal('{"error":"search_knowledge_bases needs a non-empty query"}');
  });

  it("asks an attached agent in a child workflow whose id is the step's call, per element", async () => {
    const { deps, asked } = toolWorld();
    const tools = await load(deps, [attach('agent', 'agt.1')]);
    expect(tools.tools).to.deep.equal([
      {
        name: 'ask_agt_1',
        description: 'Ask the agent "Agent agt.1" (helps).',
        parameters: {
          type: 'object',
          properties: { message: { type: 'string', description: 'What to ask or tell the agent' } },
          required: ['message'],
        },
        executor: 'agent',
        targetAgentId: 'agt.1',
      },
    ]);
    const answer = await tools.run({ id: 'c1', name: 'ask_agt_1', arguments: '{"message":"hello"}' });
    expect(JSON.parse(answer)).to.equal('answer of agent-call-chain-run-org_1-run_1-1-stp_1-c1');
    await tools.run({ id: 'c1', name: 'ask_agt_1', arguments: '{"other":1}' }, 4);
    expect(asked.starts).to.deep.equal([
      { workflowId: 'agent-call-chain-run-org_1-run_1-1-stp_1-c1', prompt: 'hello' },
      { workflowId: 'agent-call-chain-run-org_1-run_1-1-stp_1-4-c1', prompt: '{"other":1}' },
    ]);
    expect(asked.reads).to.equal(1);
    // No knowledge base attached: searching them is not one of the step's tools.
    expect(
      await tools.run({ id: 'c2', name: 'search_knowledge_bases', arguments: '{"query":"q"}' }),
    ).to.equal('{"error":"tool search_knowledge_bases is not attached to this step"}');
  });

  it('runs a catalogue tool with its configuration, and says when that configuration is no longer valid', async () => {
    const { deps } = toolWorld();
    const tools = await load(deps, [
      attach('tool', 'current_time', '{"timeZone":"Australia/Sydney"}'),
      attach('tool', 'no_such_tool'),
    ]);
    expect(tools.tools.map((t) => t.name)).to.deep.equal(['current_time']);
    const answer = JSON.parse(await tools.run({ id: 'c1', name: 'current_time', arguments: '' })) as object;
    expect(answer).to.include({ timeZone: 'Australia/Sydney' });
    const stale = await load(deps, [attach('tool', 'current_time', '{"timeZone":"Nowhere/Else"}')]);
    expect(await stale.run({ id: 'c1', name: 'current_time', arguments: '{}' })).to.equal(
      '{"error":"the configuration of current_time is no longer valid; update the attachment"}',
    );
  });

  it('answers the model with an error for bad arguments, a tool not attached, or a tool that fails', async () => {
    const { deps } = toolWorld();
    deps.knowledge.searchForStep = () => Promise.reject(new Error('index offline'));
    const tools = await load(deps, [attach('knowledge-base', 'kb_1')]);
    expect(await tools.run({ id: 'c1', name: 'search_knowledge_bases', arguments: '{oops' })).to.equal(
      '{"error":"tool arguments are not valid JSON"}',
    );
    expect(await tools.run({ id: 'c1', name: 'current_time', arguments: '{}' })).to.equal(
      '{"error":"tool current_time is not attached to this step"}',
    );
    expect(
      await tools.run({ id: 'c1', name: 'search_knowledge_bases', arguments: '{"query":"q"}' }),
    ).to.equal('{"error":"index offline"}');
  });

  it('reads a catalogue tool attached without configuration with its defaults', async () => {
    const { deps } = toolWorld();
    const tools = await load(deps, [attach('tool', 'current_time')]);
    const answer = JSON.parse(await tools.run({ id: 'c1', name: 'current_time', arguments: '' })) as object;
    // The configuration schema's default time zone (lib/tools/specs/current-time.ts).
    expect(answer).to.include({ timeZone: 'UTC' });
  });

  it("cuts an agent's tool name to the 64 characters a function name may have", async () => {
    const { deps } = toolWorld();
    const tools = await load(deps, [attach('agent', `agt_${'x'.repeat(70)}`)]);
    expect(tools.tools[0]!.name).to.equal(`ask_agt_${'x'.repeat(56)}`);
  });

  it("starts an agent's call tagged with the organization and the agent, under the organization's fairness key", async () => {
    const { deps, asked } = toolWorld();
    const tools = await load(deps, [attach('agent', 'agt_1')]);
    await tools.run({ id: 'c1', name: 'ask_agt_1', arguments: '{"message":"hi"}' });
    expect(asked.startOptions).to.have.length(1);
    expect(asked.startOptions[0]).to.deep.include({
      taskQueue: 'q',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: { name: 'OrganizationId', type: 'KEYWORD' }, value: 'org_1' },
        { key: { name: 'AgentId', type: 'KEYWORD' }, value: 'agt_1' },
      ],
      priority: { fairnessKey: 'org_1' },
    });
  });

  it('runs a catalogue tool as the chain, for the member who started the run', async () => {
    const { deps } = toolWorld();
    const spec = findTool('current_time')!;
    const original = spec.run;
    const contexts: Array<ToolRunContext<Record<string, unknown>>> = [];
    // A stand-in for the tool's own work: what matters is the context the step gives it.
    spec.run = (ctx) => {
      contexts.push(ctx);
      return Promise.resolve('ok');
    };
    try {
      const tools = await load(deps, [attach('tool', 'current_time', '{"timeZone":"UTC"}')]);
      await tools.run({ id: 'c1', name: 'current_time', arguments: '{}' }, 2);
    } finally {
      spec.run = original;
    }
    expect(contexts).to.deep.equal([
      {
        organizationId: 'org_1',
        agentId: 'chain:chn_1',
        config: { timeZone: 'UTC' },
        requestId: 'chain-run-org_1-run_1-1-stp_1-2',
        toolCallId: 'c1',
        chainRun: { actionChainId: 'chn_1', runId: 'run_1', userId: 'usr_1' },
      },
    ]);
  });
});
