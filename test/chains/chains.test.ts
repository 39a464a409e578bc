import { expect } from 'chai';
import { closeTestEnv, testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { createKb } from '@test/helpers/kb';

const FILE_INPUT = {
  type: 'object',
  properties: {
    fileId: { type: 'string' },
    knowledgeBaseId: { type: 'string' },
    fileName: { type: 'string' },
  },
};
const chainBody = (extra: Record<string, unknown> = {}) => ({
  name: 'Triage',
  description: 'Classifies messages',
  llmInstructions: 'Be brief.',
  ...extra,
});

describe('action chains: chains, steps and attachments', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  before(async () => {
    env = await testEnv();
    other = await createTestOrg(env, 'Other Chains Org');
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Chains Org');
  });
  after(() => closeTestEnv());

  const admin = () => as(env, org.admin.token);

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a response body, read field by field
  async function createChain(extra: Record<string, unknown> = {}): Promise<any> {
    return (await admin().post(org.path('/chains'), chainBody(extra)).expect(201)).body;
  }

  it('creates, lists, reads, replaces and deletes chains with their steps in stepOrder', async () => {
    const chain = await createChain({
      steps: [
        { stepOrder: 2, name: 'second', instructions: 'Then {{category}}' },
        { stepOrder: 1, name: 'first', instructions: 'Classify {{input.message}}' },
      ],
    });
    expect(chain).to.include({ name: 'Triage', inputType: 'json', creatorUserId: org.admin.userId });
    expect(chain.workflowId).to.equal(chain.actionChainId);
    expect(chain.steps.map((s: { name: string }) => s.name)).to.deep.equal(['first', 'second']);
    expect(chain.steps[0]).to.include({ enabled: true, reasoning: 'none', runIf: null });

    await createChain({ name: 'Second chain', inputType: 'file', description: '', llmInstructions: '' });
    const list = await as(env, org.chat.token).get(org.path('/chains?limit=1')).expect(200);
    expect(list.body).to.include({ totalRows: 2, offset: 0 });
    expect(list.body.items[0].name).to.equal('Triage');
    expect(list.body.items[0]).to.not.have.property('steps');
    const files = await admin().get(org.path('/chains?inputType=file')).expect(200);
    expect(files.body.items.map((c: { name: string }) => c.name)).to.deep.equal(['Second chain']);
    const newest = await admin().get(org.path('/chains?orderBy=created_at:desc')).expect(200);
    expect(newest.body.items[0].name).to.equal('Second chain');

    const path = org.path(`/chains/${chain.actionChainId}`);
    // PUT without steps keeps them; with steps replaces them all.
    const kept = await admin()
      .put(path, chainBody({ name: 'Renamed', inputType: 'json' }))
      .expect(200);
    expect(kept.body.name).to.equal('Renamed');
    expect(kept.body.steps).to.have.length(2);
    const replaced = await admin()
      .put(path, chainBody({ inputType: 'json', steps: [{ stepOrder: 5, name: 'only' }] }))
      .expect(200);
    expect(replaced.body.steps.map((s: { name: string }) => s.name)).to.deep.equal(['only']);
    expect(
      (
        await admin()
          .get(org.path(`/chains/${chain.actionChainId}/steps`))
          .expect(200)
      ).body,
    ).to.have.length(1);

    await admin().delete(path).expect(200);
    const gone = await admin().get(path).expect(404);
    expect(gone.body.error.code).to.equal('not_found');
  });

  it('refuses steps whose template, guards, path or schemas do not parse, naming each problem', async () => {
    const chain = await createChain();
    const steps = org.path(`/chains/${chain.actionChainId}/steps`);
    const refused = async (step: Record<string, unknown>, text: string) => {
      const res = await admin()
        .post(steps, { stepOrder: 1, ...step })
        .expect(400);
      expect(res.body.error.message).to.contain(text);
    };
    await refused({ instructions: 'Hello {{#if}}' }, 'instructions');
    await refused({ instructions: '{{lookupFile "x"}} {{system x}}' }, 'unknown helper');
    await refused({ runIf: 'input.a >' }, 'runIf');
    await refused({ failBeforeRunningIf: 'a ==== b' }, 'failBeforeRunningIf');
    await refused({ failAfterRunningIf: '(' }, 'failAfterRunningIf');
    await refused({ forEachElement: 'input.items' }, 'forEachElement');
    // openapi.yaml says what a step schema is (StepObjectSchema): the contract refuses these, naming the place
    await refused(
      { outputSchema: { type: 'string', properties: {} } },
      'outputSchema/type must be equal to one of the allowed values',
    );
    await refused(
      { outputSchema: { type: 'object' } },
      "outputSchema must have required property 'properties'",
    );
    await refused(
      { inputSchema: { type: 'object', properties: { a: { type: 'nope' } } } },
      'inputSchema/properties/a/type must be equal to one of the allowed values',
    );
    await refused(
      { outputSchema: { type: 'object', properties: { input: { type: 'string' } } } },
      'outputSchema/properties/input must NOT be valid',
    );
    // and the service what only it can check: the schema must compile
    await refused(
      { inputSchema: { type: 'object', properties: { a: { type: 'string', dependencies: 5 } } } },
      'inputSchema',
    );
    // Schema patterns run on a linear-time engine, which cannot run backreferences or lookarounds.
    const pattern = (p: string) => ({ type: 'object', properties: { a: { type: 'string', pattern: p } } });
    await refused({ outputSchema: pattern('(a)\\1') }, 'cannot be matched in linear time');
    await refused({ inputSchema: pattern('^(?=x)') }, 'cannot be matched in linear time');
    const both = await admin().post(steps, { stepOrder: 1, runIf: '(', forEachElement: 'x' }).expect(400);
    expect(both.body.error.details).to.have.length(2);
    // the schema itself refuses what is not a step
    await admin().post(steps, { stepOrder: 'one' }).expect(400);
    await admin().post(steps, { name: 'no order' }).expect(400);
    expect((await admin().get(steps).expect(200)).body).to.have.length(0);
  });

  it("requires a file chain's first step to take fileId, knowledgeBaseId and fileName", async () => {
    const refused = await admin()
      .post(
        org.path('/chains'),
        chainBody({
          inputType: 'file',
          steps: [
            { stepOrder: 1, inputSchema: { type: 'object', properties: { fileId: { type: 'string' } } } },
          ],
        }),
      )
      .expect(400);
    expect(refused.body.error.message).to.contain('knowledgeBaseId, fileName');
    const chain = await createChain({
      inputType: 'file',
      steps: [{ stepOrder: 1, inputSchema: FILE_INPUT }],
    });
    const steps = org.path(`/chains/${chain.actionChainId}/steps`);
    // a new step before the first one must take the file too
    await admin().post(steps, { stepOrder: 0 }).expect(400);
    await admin().post(steps, { stepOrder: 2 }).expect(201);
    // the first step cannot be removed while the next does not take the file
    await admin().delete(`${steps}/${chain.steps[0].stepId}`).expect(400);
    // nor can the chain become a file chain around a json first step
    const json = await createChain({ steps: [{ stepOrder: 1 }] });
    await admin()
      .put(org.path(`/chains/${json.actionChainId}`), chainBody({ inputType: 'file' }))
      .expect(400);
  });

  it('changes single steps and keeps the chain updatedAt current', async () => {
    const chain = await createChain();
    const steps = org.path(`/chains/${chain.actionChainId}/steps`);
    const step = (await admin().post(steps, { stepOrder: 1, name: 'a', toolChoice: 'auto' }).expect(201))
      .body;
    expect(step).to.include({ name: 'a', toolChoice: 'auto', actionChainId: chain.actionChainId });
    const put = await admin()
      .put(`${steps}/${step.stepId}`, { stepOrder: 3, name: 'b', runIf: "input.kind == 'x'" })
      .expect(200);
    // PUT keeps an omitted optional field (toolChoice), and null clears it.
    expect(put.body).to.include({ stepOrder: 3, name: 'b', runIf: "input.kind == 'x'", toolChoice: 'auto' });
    const cleared = await admin()
      .put(`${steps}/${step.stepId}`, { stepOrder: 3, toolChoice: null })
      .expect(200);
    expect(cleared.body).to.include({ name: 'b', runIf: "input.kind == 'x'", toolChoice: null });
    expect((await as(env, org.chat.token).get(`${steps}/${step.stepId}`).expect(200)).body.name).to.equal(
      'b',
    );
    const after = (
      await admin()
        .get(org.path(`/chains/${chain.actionChainId}`))
        .expect(200)
    ).body;
    expect(after.updatedAt > chain.updatedAt).to.equal(true);
    await admin().delete(`${steps}/${step.stepId}`).expect(200);
    await admin().get(`${steps}/${step.stepId}`).expect(404);
    await admin().put(`${steps}/${step.stepId}`, { stepOrder: 1 }).expect(404);
  });

  it('attaches agents, knowledge bases and tools to steps; tool secrets are write-only', async () => {
    const chain = await createChain({ steps: [{ stepOrder: 1 }] });
    const step = `/chains/${chain.actionChainId}/steps/${chain.steps[0].stepId}`;
    const kb = await createKb(env, org);
    const agent = await admin()
      .post(org.path('/agents'), {
        name: 'Helper',
        description: 'd',
        instructions: 'i',
        model: 'gpt-4o-mini',
      })
      .expect(201);
    await admin()
      .post(org.path(`${step}/agents`), { agentId: agent.body.id })
      .expect(201);
    await admin()
      .post(org.path(`${step}/agents`), { agentId: agent.body.id })
      .expect(409);
    await admin()
      .post(org.path(`${step}/agents`), { agentId: 'agt_missing' })
      .expect(invalidReference('agentId'));
    await admin()
      .post(org.path(`${step}/knowledge-bases`), { knowledgeBaseId: kb })
      .expect(201);
    await admin()
      .post(org.path(`${step}/knowledge-bases`), { knowledgeBaseId: 'kb_nope' })
      .expect(invalidReference('knowledgeBaseId'));
    const kbs = await as(env, org.chat.token)
      .get(org.path(`${step}/knowledge-bases`))
      .expect(200);
    expect(kbs.body.map((a: { knowledgeBaseId: string }) => a.knowledgeBaseId)).to.deep.equal([kb]);
    await admin()
      .get(org.path(`${step}/knowledge-bases/${kb}`))
      .expect(200);

    const bad = await admin()
      .post(org.path(`${step}/tools`), { toolCode: 'http_request', config: { allowedHosts: 'x' } })
      .expect(400);
    expect(bad.body.error.message).to.contain('http_request');
    await admin()
      .post(org.path(`${step}/tools`), { toolCode: 'no_such_tool', config: {} })
      .expect(400);
    const config = { allowedHosts: ['api.example.com'], headers: { Authorization: 'Bearer s3cret' } };
    const tool = await admin()
      .post(org.path(`${step}/tools`), { toolCode: 'http_request', config })
      .expect(201);
    expect(JSON.stringify(tool.body)).to.not.contain('s3cret');
    expect(tool.body.config.headers.Authorization).to.equal('********');
    // sending the mask back keeps the stored secret
    const updated = await admin()
      .put(org.path(`${step}/tools/http_request`), {
        config: { ...config, allowedHosts: ['b.example.com'], headers: { Authorization: '********' } },
      })
      .expect(200);
    expect(updated.body.config.allowedHosts).to.deep.equal(['b.example.com']);
    const stored = await env.deps.repos
      .tenant(org.organizationId)
      .chainAttachments.getForStep(chain.steps[0].stepId, 'tool', 'http_request');
    expect(stored!.configJson).to.contain('Bearer s3cret');
    // a tool the step does not have (named in the path) is 404 before its configuration is looked at
    await admin()
      .put(org.path(`${step}/tools/current_time`), { config: { timeZone: 'Not/AZone' } })
      .expect(404);
    await admin()
      .delete(org.path(`${step}/tools/http_request`))
      .expect(200);
    await admin()
      .get(org.path(`${step}/tools/http_request`))
      .expect(404);

    // deleting the agent removes it from the step
    await as(env, org.owner.token)
      .delete(org.path(`/agents/${agent.body.id}`))
      .expect(200);
    expect(
      (
        await admin()
          .get(org.path(`${step}/agents`))
          .expect(200)
      ).body,
    ).to.have.length(0);
  });

  it('attaches chains to agents and drops the attachment with the chain', async () => {
    const chain = await createChain();
    const agent = await admin()
      .post(org.path('/agents'), {
        name: 'Runner',
        description: 'd',
        instructions: 'i',
        model: 'gpt-4o-mini',
      })
      .expect(201);
    const path = org.path(`/agents/${agent.body.id}/chains`);
    const attached = await admin().post(path, { actionChainId: chain.actionChainId }).expect(201);
    expect(attached.body).to.include({ agentId: agent.body.id, name: 'Triage' });
    await admin().post(path, { actionChainId: chain.actionChainId }).expect(409);
    await admin().post(path, { actionChainId: 'chn_missing' }).expect(400);
    const listed = await admin().get(path).expect(200);
    expect(listed.body.actionChains).to.have.length(1);
    await admin()
      .delete(org.path(`/chains/${chain.actionChainId}`))
      .expect(200);
    expect((await admin().get(path).expect(200)).body.actionChains).to.have.length(0);
    await admin().delete(`${path}/${chain.actionChainId}`).expect(404);
  });

  it('lets every member read chains but only admins and owners change them', async () => {
    const chain = await createChain({ steps: [{ stepOrder: 1 }] });
    const chat = as(env, org.chat.token);
    await chat.get(org.path(`/chains/${chain.actionChainId}`)).expect(200);
    await chat.post(org.path('/chains'), chainBody()).expect(403);
    await chat.put(org.path(`/chains/${chain.actionChainId}`), chainBody({ inputType: 'json' })).expect(403);
    await chat.delete(org.path(`/chains/${chain.actionChainId}`)).expect(403);
    await chat.post(org.path(`/chains/${chain.actionChainId}/steps`), { stepOrder: 2 }).expect(403);
    await as(env, org.apiKey).post(org.path('/chains'), chainBody()).expect(201);
  });

  it("never shows or changes another organization's chains", async () => {
    const chain = await createChain({ steps: [{ stepOrder: 1 }] });
    const step = chain.steps[0].stepId;
    const stranger = as(env, other.admin.token);
    // their own organization's paths with our ids: not found, like a missing chain
    await stranger.get(other.path(`/chains/${chain.actionChainId}`)).expect(404);
    await stranger
      .put(other.path(`/chains/${chain.actionChainId}`), chainBody({ inputType: 'json' }))
      .expect(404);
    await stranger.delete(other.path(`/chains/${chain.actionChainId}`)).expect(404);
    await stranger.get(other.path(`/chains/${chain.actionChainId}/steps/${step}`)).expect(404);
    await stranger.post(other.path(`/chains/${chain.actionChainId}/run`), {}).expect(404);
    await stranger.get(other.path(`/chains/${chain.actionChainId}/runs`)).expect(404);
    expect((await stranger.get(other.path('/chains')).expect(200)).body.items).to.have.length(0);
    // our paths with their token: refused
    await stranger.get(org.path(`/chains/${chain.actionChainId}`)).expect(401);
    // their knowledge bases cannot be attached to our steps
    const theirKb = await createKb(env, other);
    await admin()
      .post(org.path(`/chains/${chain.actionChainId}/steps/${step}/knowledge-bases`), {
        knowledgeBaseId: theirKb,
      })
      .expect(invalidReference('knowledgeBaseId'));
    expect(
      (
        await admin()
          .get(org.path(`/chains/${chain.actionChainId}`))
          .expect(200)
      ).body.name,
    ).to.equal('Triage');
  });

  it('gives a removed member’s chains to reassignWorkflowsTo', async () => {
    const chain = await createChain();
    const res = await as(env, org.owner.token)
      .delete(org.path(`/users/${org.admin.userId}?reassignWorkflowsTo=${org.owner.userId}`))
      .expect(200);
    expect(res.body.reassignedWorkflows).to.equal(1);
    const after = await as(env, org.owner.token)
      .get(org.path(`/chains/${chain.actionChainId}`))
      .expect(200);
    expect(after.body.creatorUserId).to.equal(org.owner.userId);
  });
});
