import { expect } from 'chai';
import type { RequestContext } from '@lib/auth/context';
import type { ChainDoc, StepDoc } from '@lib/chains/chain.schema';
import type { ChainFields, StepFields } from '@lib/chains/chains.repository';
import { ChainsService } from '@lib/chains/chains.service';
import type { ChainsStore } from '@lib/chains/store';
import type { Tenants } from '@lib/db/tenants';
import { refusal } from '@test/helpers/errors';

/*
 * Chains and their steps as the API changes them (docs/chains.md; openapi.yaml createChain, updateChain,
 * updateChainStep, deleteChainStep, deleteChain), over an in-memory stand-in of the organization's store: nothing
 * is written for a refused request; a PUT replaces the steps only when it sends them (their attachments go with
 * them); a step's PUT keeps the fields it leaves out and clears those it sends as null; a file chain always keeps
 * a first step that takes the file; a deleted chain takes its steps, attachments and runs with it.
 */
const ctx = { organizationId: 'org_1', userId: 'usr_1' } as RequestContext;

class World {
  chains = new Map<string, ChainDoc>();
  steps = new Map<string, StepDoc>();
  removed: string[] = [];
  touched: string[] = [];
  /** the chain or step is deleted by another request between the service's read and its write */
  deletedMeanwhile = false;

  readonly store = {
    tenant: () => ({
      chains: {
        get: (id: string) => Promise.resolve(this.chains.get(id) ?? null),
        create: (id: string, creatorUserId: string, fields: ChainFields) => {
          const doc = { _id: id, organizationId: 'org_1', creatorUserId, ...fields } as ChainDoc;
          this.chains.set(id, doc);
          return Promise.resolve(doc);
        },
        update: (id: string, fields: Partial<ChainFields>) => {
          const doc = this.deletedMeanwhile ? undefined : this.chains.get(id);
          if (doc) Object.assign(doc, fields);
          return Promise.resolve(doc ?? null);
        },
        touch: (id: string) => Promise.resolve(void this.touched.push(id)),
        remove: (id: string) => Promise.resolve(void this.chains.delete(id)),
        listSteps: (id: string) =>
          Promise.resolve(
            [...this.steps.values()]
              .filter((s) => s.actionChainId === id)
              .sort((a, b) => a.stepOrder - b.stepOrder),
          ),
        getStep: (id: string, stepId: string) => {
          const step = this.steps.get(stepId);
          return Promise.resolve(step?.actionChainId === id ? step : null);
        },
        createStep: (id: string, stepId: string, fields: StepFields) => {
          const doc = { _id: stepId, organizationId: 'org_1', actionChainId: id, ...fields } as StepDoc;
          this.steps.set(stepId, doc);
          return Promise.resolve(doc);
        },
        replaceStep: (id: string, stepId: string, fields: StepFields) => {
          const old = this.steps.get(stepId);
          if (old?.actionChainId !== id || this.deletedMeanwhile) return Promise.resolve(null);
          const doc = { ...old, ...fields };
          this.steps.set(stepId, doc);
          return Promise.resolve(doc);
        },
        removeStep: (id: string, stepId: string) =>
          Promise.resolve(
            !this.deletedMeanwhile &&
              this.steps.get(stepId)?.actionChainId === id &&
              this.steps.delete(stepId),
          ),
        removeSteps: (id: string) => {
          for (const s of [...this.steps.values()]) if (s.actionChainId === id) this.steps.delete(s._id);
          return Promise.resolve();
        },
      },
      chainAttachments: {
        removeForStep: (stepId: string) =>
          Promise.resolve(void this.removed.push(`attachments of ${stepId}`)),
        removeForChain: (id: string) => Promise.resolve(void this.removed.push(`attachments of ${id}`)),
      },
      chainRuns: {
        removeForChain: (id: string) => Promise.resolve(void this.removed.push(`runs of ${id}`)),
      },
    }),
  } as unknown as Tenants<ChainsStore>;

  readonly service = new ChainsService(this.store, 10);
}

const fileInput = {
  type: 'object',
  properties: {
    fileId: { type: 'string' },
    knowledgeBaseId: { type: 'string' },
    fileName: { type: 'string' },
  },
};

describe('chains service', () => {
  it('creates a chain of json input by default, its steps in step order', async () => {
    const w = new World();
    const view = await w.service.create(ctx, {
      name: 'Triage',
      description: '',
      llmInstructions: '',
      steps: [
        { stepOrder: 2, name: 'Reply' },
        { stepOrder: 1, name: 'Classify' },
      ],
    });
    expect(view.inputType).to.equal('json');
    expect(view.creatorUserId).to.equal('usr_1');
    expect(view.steps?.map((s) => [s.stepOrder, s.name])).to.deep.equal([
      [1, 'Classify'],
      [2, 'Reply'],
    ]);
  });

  it('writes nothing for a chain it refuses: schemas over the budget, a file chain whose first step takes no file', async () => {
    const w = new World();
    // 6 objects each, 12 together: over the budget of 10 this service was given
    const big = {
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'object', properties: {} } } } },
    };
    const tooBig = await refusal(
      w.service.create(ctx, {
        name: 'Big',
        description: '',
        llmInstructions: '',
        steps: [{ stepOrder: 1, inputSchema: big, outputSchema: big }],
      }),
    );
    expect(tooBig.status).to.equal(400);
    const noFile = await refusal(
      w.service.create(ctx, {
        name: 'File',
        description: '',
        llmInstructions: '',
        inputType: 'file',
        steps: [{ stepOrder: 1 }],
      }),
    );
    expect(noFile.message).to.contain('needs an inputSchema with the properties fileId');
    expect(w.chains.size).to.equal(0);
    expect(w.steps.size).to.equal(0);
  });

  it('replaces the steps, and their attachments, only when a PUT sends them', async () => {
    const w = new World();
    const { actionChainId } = await w.service.create(ctx, {
      name: 'Triage',
      description: '',
      llmInstructions: '',
      steps: [{ stepOrder: 1, name: 'Old' }],
    });
    const [old] = [...w.steps.keys()];
    const kept = await w.service.update(ctx, actionChainId, {
      name: 'Renamed',
      description: '',
      llmInstructions: '',
    });
    expect(kept.name).to.equal('Renamed');
    expect(kept.steps?.map((s) => s.name)).to.deep.equal(['Old']);
    expect(w.removed).to.deep.equal([]);

    const replaced = await w.service.update(ctx, actionChainId, {
      name: 'Renamed',
      description: '',
      llmInstructions: '',
      steps: [{ stepOrder: 1, name: 'New' }],
    });
    expect(replaced.steps?.map((s) => s.name)).to.deep.equal(['New']);
    expect(w.steps.has(old!)).to.equal(false);
    expect(w.removed).to.deep.equal([`attachments of ${old}`]);

    // a file chain's check reads the stored steps when none are sent
    const toFile = await refusal(
      w.service.update(ctx, actionChainId, {
        name: 'x',
        description: '',
        llmInstructions: '',
        inputType: 'file',
      }),
    );
    expect(toFile.status).to.equal(400);
    expect(w.chains.get(actionChainId)?.inputType).to.equal('json');
    expect(
      (await refusal(w.service.update(ctx, 'chn_none', { name: 'x', description: '', llmInstructions: '' })))
        .status,
    ).to.equal(404);
  });

  it("keeps a step's fields a PUT leaves out, clears those it sends as null, and marks the chain changed", async () => {
    const w = new World();
    const { actionChainId } = await w.service.create(ctx, {
      name: 'Triage',
      description: '',
      llmInstructions: '',
      steps: [
        {
          stepOrder: 1,
          name: 'Classify',
          instructions: 'Classify {{input.message}}',
          runIf: 'input.go',
          outputSchema: { type: 'object', properties: { category: { type: 'string' } } },
        },
      ],
    });
    const [stepId] = [...w.steps.keys()];
    const view = await w.service.updateStep(ctx, actionChainId, stepId!, {
      stepOrder: 1,
      runIf: null,
      name: 'Sort',
    });
    expect(view).to.include({ name: 'Sort', instructions: 'Classify {{input.message}}', runIf: null });
    expect(view.outputSchema).to.deep.equal({ type: 'object', properties: { category: { type: 'string' } } });
    expect(w.touched).to.deep.equal([actionChainId]);
    expect(
      (await refusal(w.service.updateStep(ctx, actionChainId, 'stp_none', { stepOrder: 1 }))).message,
    ).to.equal('step not found');
  });

  it("keeps a file chain's first step taking the file: a step that would leave it without one is refused", async () => {
    const w = new World();
    const { actionChainId } = await w.service.create(ctx, {
      name: 'Files',
      description: '',
      llmInstructions: '',
      inputType: 'file',
      steps: [{ stepOrder: 1, inputSchema: fileInput }],
    });
    const [first] = [...w.steps.keys()];
    // a new step before it becomes the first
    expect((await refusal(w.service.createStep(ctx, actionChainId, { stepOrder: 0 }))).status).to.equal(400);
    const later = await w.service.createStep(ctx, actionChainId, { stepOrder: 2 });
    // the first step removed leaves one that takes no file
    expect((await refusal(w.service.removeStep(ctx, actionChainId, first!))).status).to.equal(400);
    expect(w.steps.has(first!)).to.equal(true);
    expect(await w.service.removeStep(ctx, actionChainId, later.stepId)).to.deep.equal({
      actionChainId,
      stepId: later.stepId,
      deleted: true,
    });
    expect(w.removed).to.deep.equal([`attachments of ${later.stepId}`]);
    // the step added and the step removed changed the chain; the refusals did not
    expect(w.touched).to.deep.equal([actionChainId, actionChainId]);
  });

  it('deletes a chain with its attachments, runs and steps; a step of another chain is not found through it', async () => {
    const w = new World();
    const a = await w.service.create(ctx, {
      name: 'A',
      description: '',
      llmInstructions: '',
      steps: [{ stepOrder: 1 }],
    });
    const b = await w.service.create(ctx, {
      name: 'B',
      description: '',
      llmInstructions: '',
      steps: [{ stepOrder: 1 }],
    });
    const stepOfB = b.steps![0]!.stepId;
    expect((await refusal(w.service.getStep(ctx, a.actionChainId, stepOfB))).status).to.equal(404);
    expect((await refusal(w.service.removeStep(ctx, a.actionChainId, stepOfB))).status).to.equal(404);

    expect(await w.service.remove(ctx, a.actionChainId)).to.deep.equal({
      actionChainId: a.actionChainId,
      deleted: true,
    });
    expect(w.removed).to.deep.equal([`attachments of ${a.actionChainId}`, `runs of ${a.actionChainId}`]);
    expect(w.chains.has(a.actionChainId)).to.equal(false);
    expect([...w.steps.values()].map((s) => s.actionChainId)).to.deep.equal([b.actionChainId]);
    expect((await refusal(w.service.remove(ctx, a.actionChainId))).status).to.equal(404);
  });

  it('gives new chains and steps their own ids, and checks the schema budget of a step added or changed alone', async () => {
    const w = new World();
    const chain = await w.service.create(ctx, {
      name: 'A',
      description: '',
      llmInstructions: '',
      steps: [{ stepOrder: 1 }],
    });
    expect(chain.actionChainId).to.match(/^chn_/);
    expect(chain.steps![0]!.stepId).to.match(/^stp_/);
    const added = await w.service.createStep(ctx, chain.actionChainId, { stepOrder: 2 });
    expect(added.stepId).to.match(/^stp_/);
    // 12 objects: over the budget of 10 this service was given
    const big = {
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'object', properties: {} } } } },
    };
    const asNew = await refusal(
      w.service.createStep(ctx, chain.actionChainId, { stepOrder: 3, inputSchema: big, outputSchema: big }),
    );
    expect(asNew.status).to.equal(400);
    const asChange = await refusal(
      w.service.updateStep(ctx, chain.actionChainId, added.stepId, {
        stepOrder: 2,
        inputSchema: big,
        outputSchema: big,
      }),
    );
    expect(asChange.status).to.equal(400);
    expect(w.steps.size).to.equal(2);
    expect(w.steps.get(added.stepId)?.inputSchemaJson ?? null).to.equal(null);
  });

  it('answers 404 naming what is missing, also when it is deleted between the read and the write', async () => {
    const w = new World();
    expect((await refusal(w.service.get(ctx, 'chn_none'))).message).to.equal('action chain not found');
    const chain = await w.service.create(ctx, {
      name: 'A',
      description: '',
      llmInstructions: '',
      steps: [{ stepOrder: 1 }, { stepOrder: 2 }],
    });
    const [first, second] = chain.steps!.map((s) => s.stepId) as [string, string];
    w.deletedMeanwhile = true;
    const update = await refusal(
      w.service.update(ctx, chain.actionChainId, { name: 'B', description: '', llmInstructions: '' }),
    );
    expect([update.status, update.message]).to.deep.equal([404, 'action chain not found']);
    const stepUpdate = await refusal(
      w.service.updateStep(ctx, chain.actionChainId, first, { stepOrder: 1, name: 'x' }),
    );
    expect([stepUpdate.status, stepUpdate.message]).to.deep.equal([404, 'step not found']);
    const stepRemoval = await refusal(w.service.removeStep(ctx, chain.actionChainId, second));
    expect([stepRemoval.status, stepRemoval.message]).to.deep.equal([404, 'step not found']);
    expect(w.touched).to.deep.equal([]);
  });
});
