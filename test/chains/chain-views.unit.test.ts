import { expect } from 'chai';
import type { ChainDoc, StepDoc } from '@lib/chains/chain.schema';
import type { ChainRun } from '@lib/chains/chain-runs.repository';
import type { AgentChainDoc, StepAttachmentDoc } from '@lib/chains/step-attachment.schema';
import {
  toAgentChainView,
  toChainView,
  toRunView,
  toStepAttachmentView,
  toStepView,
} from '@lib/chains/views';

/*
 * What a client reads of chains, steps, runs and step attachments (openapi.yaml: ActionChain, ChainStep, ChainRun,
 * the step attachment shapes): the ids under their API names, schemas as objects, dates as ISO text, a run's
 * steps in step order, and a tool attachment's secrets masked. Expected values are written out, not derived.
 */
const T1 = new Date('2026-03-01T10:00:00.000Z');
const T2 = new Date('2026-03-01T10:05:00.000Z');

const step = (over: Partial<StepDoc> = {}) =>
  ({
    _id: 'stp_1',
    organizationId: 'org_1',
    actionChainId: 'chn_1',
    stepOrder: 1,
    name: 'Classify',
    description: 'd',
    instructions: 'Classify {{input.message}}',
    reasoning: 'none',
    enabled: true,
    inputSchemaJson: '{"type":"object","properties":{"message":{"type":"string"}}}',
    outputSchemaJson: null,
    showWholeChainState: false,
    forEachElement: null,
    toolChoice: null,
    runIf: 'input.go',
    failBeforeRunningIf: null,
    failAfterRunningIf: null,
    createdAt: T1,
    updatedAt: T2,
    ...over,
  }) as StepDoc;

const stepView = {
  stepId: 'stp_1',
  actionChainId: 'chn_1',
  stepOrder: 1,
  name: 'Classify',
  description: 'd',
  instructions: 'Classify {{input.message}}',
  reasoning: 'none',
  enabled: true,
  showWholeChainState: false,
  forEachElement: null,
  toolChoice: null,
  runIf: 'input.go',
  failBeforeRunningIf: null,
  failAfterRunningIf: null,
  createdAt: '2026-03-01T10:00:00.000Z',
  updatedAt: '2026-03-01T10:05:00.000Z',
  inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
  outputSchema: null,
};

describe('chain views', () => {
  it('shows a step with its schemas as objects and its dates as ISO text', () => {
    expect(toStepView(step())).to.deep.equal(stepView);
  });

  it('shows a chain under both its ids, with its steps only when they were read', () => {
    const chain = {
      _id: 'chn_1',
      organizationId: 'org_1',
      name: 'Support triage',
      description: 'Classifies',
      llmInstructions: 'Be brief.',
      inputType: 'json',
      creatorUserId: 'usr_1',
      createdAt: T1,
      updatedAt: T2,
    } as ChainDoc;
    const view = {
      actionChainId: 'chn_1',
      workflowId: 'chn_1',
      organizationId: 'org_1',
      name: 'Support triage',
      description: 'Classifies',
      llmInstructions: 'Be brief.',
      inputType: 'json',
      creatorUserId: 'usr_1',
      createdAt: '2026-03-01T10:00:00.000Z',
      updatedAt: '2026-03-01T10:05:00.000Z',
    };
    expect(toChainView(chain)).to.deep.equal(view);
    expect(toChainView(chain, [step()])).to.deep.equal({ ...view, steps: [stepView] });
    expect(toChainView(chain, [])).to.deep.equal({ ...view, steps: [] });
  });

  it("shows a run's state as an object and its steps in step order, with ISO times", () => {
    const result = (stepOrder: number, finishedAt: Date | null) => ({
      stepOrder,
      stepId: `stp_${stepOrder}`,
      status: 'success',
      finishedAt,
    });
    const run = {
      _id: 'run_1',
      organizationId: 'org_1',
      actionChainId: 'chn_1',
      triggerType: 'api',
      status: 'running',
      statusMessage: null,
      generation: 2,
      startedByUserId: 'usr_1',
      createdAt: T1,
      updatedAt: T2,
      stateJson: '{"input":{"message":"hi"},"category":"billing"}',
      stepResults: { b: result(10, T2), a: result(2, null) },
      startedAt: T1,
      finishedAt: null,
    } as unknown as ChainRun;
    expect(toRunView(run)).to.deep.equal({
      runId: 'run_1',
      actionChainId: 'chn_1',
      organizationId: 'org_1',
      triggerType: 'api',
      status: 'running',
      statusMessage: null,
      generation: 2,
      startedByUserId: 'usr_1',
      createdAt: '2026-03-01T10:00:00.000Z',
      updatedAt: '2026-03-01T10:05:00.000Z',
      state: { input: { message: 'hi' }, category: 'billing' },
      steps: [
        { stepOrder: 2, stepId: 'stp_2', status: 'success', finishedAt: null },
        { stepOrder: 10, stepId: 'stp_10', status: 'success', finishedAt: '2026-03-01T10:05:00.000Z' },
      ],
      startedAt: '2026-03-01T10:00:00.000Z',
      finishedAt: null,
    });
    expect(toRunView({ ...run, stepResults: undefined } as unknown as ChainRun).steps).to.deep.equal([]);
  });

  it("names an attachment's target by its kind and masks a tool's secrets", () => {
    const attachment = (over: Partial<StepAttachmentDoc>) =>
      ({
        _id: 'att_1',
        organizationId: 'org_1',
        actionChainId: 'chn_1',
        stepId: 'stp_1',
        createdAt: T1,
        configJson: null,
        ...over,
      }) as StepAttachmentDoc;
    const base = {
      organizationId: 'org_1',
      actionChainId: 'chn_1',
      stepId: 'stp_1',
      createdAt: '2026-03-01T10:00:00.000Z',
    };
    expect(toStepAttachmentView(attachment({ kind: 'agent', targetId: 'agt_1' }))).to.deep.equal({
      ...base,
      agentId: 'agt_1',
    });
    expect(toStepAttachmentView(attachment({ kind: 'knowledge-base', targetId: 'kb_1' }))).to.deep.equal({
      ...base,
      knowledgeBaseId: 'kb_1',
    });
    const config = { url: 'https://example.com', headers: { Authorization: 'Bearer s3cret' } };
    expect(
      toStepAttachmentView(
        attachment({ kind: 'tool', targetId: 'http_request', configJson: JSON.stringify(config) }),
      ),
    ).to.deep.equal({
      ...base,
      toolCode: 'http_request',
      config: { url: 'https://example.com', headers: { Authorization: '********' } },
    });
    expect(toStepAttachmentView(attachment({ kind: 'tool', targetId: 'web_search' }))).to.deep.equal({
      ...base,
      toolCode: 'web_search',
      config: {},
    });
  });

  it("shows an agent's chain with the chain's name", () => {
    const link = { organizationId: 'org_1', agentId: 'agt_1', actionChainId: 'chn_1', createdAt: T1 };
    expect(toAgentChainView(link as AgentChainDoc, 'Support triage')).to.deep.equal({
      ...link,
      name: 'Support triage',
      createdAt: '2026-03-01T10:00:00.000Z',
    });
  });
});
