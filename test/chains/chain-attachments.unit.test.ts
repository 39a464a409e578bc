import { expect } from 'chai';
import type { RequestContext } from '@lib/auth/context';
import { ChainAttachmentsService } from '@lib/chains/chain-attachments.service';
import type {
  AgentChainDoc,
  StepAttachmentDoc,
  StepAttachmentKind,
} from '@lib/chains/step-attachment.schema';
import type { ChainsStore } from '@lib/chains/store';
import type { Tenants } from '@lib/db/tenants';
import { notFound } from '@lib/errors';
import { refusal } from '@test/helpers/errors';

/*
 * What chain steps use and which chains agents run (docs/chains.md; openapi.yaml's step agents, knowledge bases and
 * tools, and an agent's action chains), over in-memory stand-ins: a target the caller cannot see is a 400 naming
 * the field; a tool's configuration is checked against its spec and its secrets are write-only (a masked value
 * keeps the stored one, a mask with nothing stored is a 400); what is not attached is a 404.
 */
const ctx = { organizationId: 'org_1', userId: 'usr_1' } as RequestContext;
const T = new Date('2026-03-01T10:00:00.000Z');

class World {
  attachments: StepAttachmentDoc[] = [];
  agentLinks: AgentChainDoc[] = [];
  readonly visibleAgents = new Set(['agt_mine']);
  readonly visibleBases = new Set(['kb_mine']);
  readonly chainNames = new Map([['chn_1', 'Triage']]);
  removedTargets: string[] = [];
  /** the attachment is deleted by another request between the service's read and its write */
  deletedMeanwhile = false;

  private find(stepId: string, kind: StepAttachmentKind, targetId: string) {
    return this.attachments.find((a) => a.stepId === stepId && a.kind === kind && a.targetId === targetId);
  }

  readonly store = {
    tenant: () => ({
      chains: {
        get: (id: string) =>
          Promise.resolve(this.chainNames.has(id) ? { _id: id, name: this.chainNames.get(id) } : null),
        getMany: (ids: string[]) =>
          Promise.resolve(
            ids
              .filter((id) => this.chainNames.has(id))
              .map((id) => ({ _id: id, name: this.chainNames.get(id) })),
          ),
      },
      chainAttachments: {
        getForStep: (stepId: string, kind: StepAttachmentKind, id: string) =>
          Promise.resolve(this.find(stepId, kind, id) ?? null),
        attachToStep: (fields: Omit<StepAttachmentDoc, '_id' | 'organizationId' | 'createdAt'>) => {
          const doc = {
            ...fields,
            _id: `att_${this.attachments.length}`,
            organizationId: 'org_1',
            createdAt: T,
          };
          this.attachments.push(doc);
          return Promise.resolve(doc);
        },
        updateStepConfig: (stepId: string, kind: StepAttachmentKind, id: string, configJson: string) => {
          const doc = this.deletedMeanwhile ? undefined : this.find(stepId, kind, id);
          if (doc) doc.configJson = configJson;
          return Promise.resolve(doc ?? null);
        },
        removeTarget: (kind: StepAttachmentKind, id: string) => {
          this.removedTargets.push(`${kind} ${id}`);
          return Promise.resolve();
        },
        detachFromStep: (stepId: string, kind: StepAttachmentKind, id: string) => {
          const before = this.attachments.length;
          this.attachments = this.attachments.filter((a) => a !== this.find(stepId, kind, id));
          return Promise.resolve(this.attachments.length < before);
        },
        listForAgent: (agentId: string) =>
          Promise.resolve(this.agentLinks.filter((l) => l.agentId === agentId)),
        attachToAgent: (agentId: string, actionChainId: string) => {
          const doc = { organizationId: 'org_1', agentId, actionChainId, createdAt: T } as AgentChainDoc;
          this.agentLinks.push(doc);
          return Promise.resolve(doc);
        },
        detachFromAgent: (agentId: string, actionChainId: string) => {
          const before = this.agentLinks.length;
          this.agentLinks = this.agentLinks.filter(
            (l) => !(l.agentId === agentId && l.actionChainId === actionChainId),
          );
          return Promise.resolve(this.agentLinks.length < before);
        },
      },
    }),
  } as unknown as Tenants<ChainsStore>;

  readonly service = new ChainAttachmentsService(
    this.store,
    // the step exists unless it is named stp_gone
    {
      step: (_c: unknown, _chain: string, stepId: string) =>
        stepId === 'stp_gone' ? Promise.reject(notFound('step')) : Promise.resolve({}),
    } as never,
    {
      readable: (_c: unknown, id: string) =>
        this.visibleAgents.has(id) ? Promise.resolve({ _id: id }) : Promise.reject(notFound('agent')),
      manageable: (_c: unknown, id: string) =>
        this.visibleAgents.has(id) ? Promise.resolve({ _id: id }) : Promise.reject(notFound('agent')),
    } as never,
    {
      readable: (_c: unknown, id: string) => Promise.resolve(this.visibleBases.has(id) ? { _id: id } : null),
    } as never,
  );
}

describe('chain attachments service', () => {
  it('attaches only an agent or knowledge base the caller can see, naming the field it refuses', async () => {
    const w = new World();
    expect(await w.service.attachToStep(ctx, 'chn_1', 'stp_1', 'agent', 'agt_mine')).to.include({
      agentId: 'agt_mine',
    });
    expect(await w.service.attachToStep(ctx, 'chn_1', 'stp_1', 'knowledge-base', 'kb_mine')).to.include({
      knowledgeBaseId: 'kb_mine',
    });
    const agent = await refusal(w.service.attachToStep(ctx, 'chn_1', 'stp_1', 'agent', 'agt_theirs'));
    expect([agent.status, agent.message]).to.deep.equal([
      400,
      'agentId: agt_theirs does not exist or is not visible to you',
    ]);
    const base = await refusal(w.service.attachToStep(ctx, 'chn_1', 'stp_1', 'knowledge-base', 'kb_theirs'));
    expect([base.status, base.message]).to.deep.equal([
      400,
      'knowledgeBaseId: kb_theirs does not exist or is not visible to you',
    ]);
    expect(w.attachments.map((a) => a.configJson)).to.deep.equal([null, null]);
    expect(
      (await refusal(w.service.attachToStep(ctx, 'chn_1', 'stp_gone', 'agent', 'agt_mine'))).status,
    ).to.equal(404);
  });

  it("checks a tool's configuration, stores its secrets and never shows them", async () => {
    const w = new World();
    const config = { allowedHosts: ['api.example.com'], headers: { Authorization: 'Bearer s3cret' } };
    const view = await w.service.attachToStep(ctx, 'chn_1', 'stp_1', 'tool', 'http_request', config);
    expect(view).to.deep.include({ toolCode: 'http_request' });
    expect((view as { config: unknown }).config).to.deep.equal({
      allowedHosts: ['api.example.com'],
      headers: { Authorization: '********' },
    });
    expect(JSON.parse(w.attachments[0]!.configJson!)).to.deep.equal(config);
    // a mask where nothing is stored, and a configuration its spec refuses
    const masked = await refusal(
      w.service.attachToStep(ctx, 'chn_1', 'stp_2', 'tool', 'http_request', {
        allowedHosts: ['a.example.com'],
        headers: { Authorization: '********' },
      }),
    );
    expect(masked.status).to.equal(400);
    expect(masked.message).to.contain('configuration.headers.Authorization is ********');
    expect(
      (await refusal(w.service.attachToStep(ctx, 'chn_1', 'stp_2', 'tool', 'http_request', {}))).status,
    ).to.equal(400);
    expect(w.attachments).to.have.length(1);
  });

  it("keeps a tool's stored secrets when a new configuration sends them masked, and 404s a tool the step lacks first", async () => {
    const w = new World();
    await w.service.attachToStep(ctx, 'chn_1', 'stp_1', 'tool', 'http_request', {
      allowedHosts: ['api.example.com'],
      headers: { Authorization: 'Bearer s3cret' },
    });
    await w.service.updateStepTool(ctx, 'chn_1', 'stp_1', 'http_request', {
      allowedHosts: ['new.example.com'],
      headers: { Authorization: '********' },
    });
    expect(JSON.parse(w.attachments[0]!.configJson!)).to.deep.equal({
      allowedHosts: ['new.example.com'],
      headers: { Authorization: 'Bearer s3cret' },
    });
    // detached by another request while this one changed it: 404, not a view of nothing
    w.deletedMeanwhile = true;
    const gone = await refusal(
      w.service.updateStepTool(ctx, 'chn_1', 'stp_1', 'http_request', { allowedHosts: ['x.example.com'] }),
    );
    expect([gone.status, gone.message]).to.deep.equal([404, 'tool attachment not found']);
    // not attached: 404 even for a configuration that would be refused
    const missing = await refusal(w.service.updateStepTool(ctx, 'chn_1', 'stp_2', 'http_request', {}));
    expect([missing.status, missing.message]).to.deep.equal([404, 'tool attachment not found']);
  });

  it('detaches what is attached and answers 404 naming the kind otherwise', async () => {
    const w = new World();
    await w.service.attachToStep(ctx, 'chn_1', 'stp_1', 'agent', 'agt_mine');
    expect(await w.service.detachFromStep(ctx, 'chn_1', 'stp_1', 'agent', 'agt_mine')).to.deep.equal({
      actionChainId: 'chn_1',
      stepId: 'stp_1',
      kind: 'agent',
      id: 'agt_mine',
      deleted: true,
    });
    const again = await refusal(w.service.detachFromStep(ctx, 'chn_1', 'stp_1', 'agent', 'agt_mine'));
    expect([again.status, again.message]).to.deep.equal([404, 'agent attachment not found']);
    expect(
      (await refusal(w.service.getForStep(ctx, 'chn_1', 'stp_1', 'knowledge-base', 'kb_mine'))).message,
    ).to.equal('knowledge-base attachment not found');
  });

  it('links an agent only to an existing chain, lists its chains by name, and 404s a link that is not there', async () => {
    const w = new World();
    const bad = await refusal(w.service.attachToAgent(ctx, 'agt_mine', 'chn_none'));
    expect([bad.status, bad.message]).to.deep.equal([
      400,
      'actionChainId: chn_none does not exist or is not visible to you',
    ]);
    expect(await w.service.attachToAgent(ctx, 'agt_mine', 'chn_1')).to.deep.equal({
      organizationId: 'org_1',
      agentId: 'agt_mine',
      actionChainId: 'chn_1',
      name: 'Triage',
      createdAt: '2026-03-01T10:00:00.000Z',
    });
    // a chain deleted since shows without a name
    w.agentLinks.push({
      organizationId: 'org_1',
      agentId: 'agt_mine',
      actionChainId: 'chn_gone',
      createdAt: T,
    } as AgentChainDoc);
    const listed = await w.service.listForAgent(ctx, 'agt_mine');
    expect(listed.actionChains.map((c) => [c.actionChainId, c.name])).to.deep.equal([
      ['chn_1', 'Triage'],
      ['chn_gone', null],
    ]);
    expect((await refusal(w.service.attachToAgent(ctx, 'agt_theirs', 'chn_1'))).status).to.equal(404);
    expect(await w.service.detachFromAgent(ctx, 'agt_mine', 'chn_1')).to.include({ deleted: true });
    const again = await refusal(w.service.detachFromAgent(ctx, 'agt_mine', 'chn_1'));
    expect([again.status, again.message]).to.deep.equal([404, 'chain attachment not found']);
  });

  it('detaches a deleted target from every step of the organization that used it', async () => {
    const w = new World();
    await w.service.removeTarget('org_1', 'knowledge-base', 'kb_gone');
    expect(w.removedTargets).to.deep.equal(['knowledge-base kb_gone']);
  });
});
