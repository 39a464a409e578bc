import { expect } from 'chai';
import request from 'supertest';
import { createRunnableChain, finished, obj, startRun, str } from '@test/helpers/chains';
import { createKb, settled, uploadFile } from '@test/helpers/kb';
import { as, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { useWorkerAndOrg } from '@test/helpers/worker';
import type { TestEnv } from '@test/helpers/env';

/*
 * Issue 32: what a tenant writes (templates, guards, paths, glob patterns) is refused at save time when it can
 * only be too costly, and otherwise runs on a budget that ends the one run, delivery or request that goes over it.
 */

/** The webhook mapping that rendered in the worker until it ran out of memory (issue 32, item 3). */
const CUBED = '{{#each body.a}}{{#each @root.body.a}}{{#each @root.body.a}}.{{/each}}{{/each}}{{/each}}';

describe('tenant-written templates, expressions and patterns run on a budget', function () {
  this.timeout(300_000);
  const suite = useWorkerAndOrg('Budgets Org');

  async function chainWebhook(env: TestEnv, org: TestOrg) {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, instructions: 'Read {{input.text}}', inputSchema: obj({ text: str }, []) },
    ]);
    const webhook = await as(env, org.admin.token).post(org.path('/webhooks'), { name: 'Hook' }).expect(201);
    return { chain, webhookId: webhook.body.webhookId as string };
  }

  it('refuses the cubed webhook mapping at save time (400), and accepts a linear one', async () => {
    const { env, org } = suite;
    const { chain, webhookId } = await chainWebhook(env, org);
    const handlers = org.path(`/webhooks/${webhookId}/handlers`);
    const body = (inputMapping: Record<string, string>) => ({
      handlerType: 'action-chain',
      actionChainId: chain.chainId,
      instructions: 'Handle it',
      inputMapping,
    });
    const refused = await as(env, org.admin.token)
      .post(handlers, body({ text: CUBED }))
      .expect(400);
    expect(refused.body.error.code).to.equal('validation_failed');
    expect(refused.body.error.message).to.match(/inputMapping\.text .*outside the current element/);
    const partial = await as(env, org.admin.token)
      .post(handlers, body({ text: '{{> p}}' }))
      .expect(400);
    expect(partial.body.error.message).to.match(/partials/);
    await as(env, org.admin.token)
      .post(handlers, body({ text: '{{#each body.a}}{{this}},{{/each}}' }))
      .expect(201);
  });

  it('fails the delivery whose data makes a saved mapping render past the output limit, naming it', async () => {
    const { env, org } = suite;
    const { chain, webhookId } = await chainWebhook(env, org);
    // Passes the save-time check (reading outside data is fine, iterating it is not), but 1,000 × 2,000
    // characters is twice TEMPLATE_MAX_OUTPUT_CHARS.
    await as(env, org.admin.token)
      .post(org.path(`/webhooks/${webhookId}/handlers`), {
        handlerType: 'action-chain',
        actionChainId: chain.chainId,
        instructions: 'Handle it',
        inputMapping: { text: '{{#each body.a}}{{../body.s}}{{/each}}' },
      })
      .expect(201);
    await request(env.app)
      .post(org.path(`/webhooks/${webhookId}/execute`))
      .send({ a: new Array(1000).fill(0), s: 'x'.repeat(2000) })
      .expect(200);
    const run = await eventually(async () => {
      const log = await as(env, org.admin.token)
        .get(org.path(`/webhooks/${webhookId}/deliveries`))
        .expect(200);
      const deliveryId = log.body.items[0]?.deliveryId as string | undefined;
      if (!deliveryId) return undefined;
      const detail = await as(env, org.admin.token)
        .get(org.path(`/webhooks/${webhookId}/deliveries/${deliveryId}`))
        .expect(200);
      const runs = detail.body.handlerRuns as Array<{ status: string; statusMessage: string | null }>;
      // The delivery log shows an execution not yet decided as pending.
      return runs.length === 1 && runs[0]!.status !== 'pending' && runs[0];
    }, 120_000);
    expect(run.status).to.equal('failed');
    expect(run.statusMessage).to.match(
      /inputMapping\.text could not be rendered: .*TEMPLATE_MAX_OUTPUT_CHARS/,
    );
    // Nothing was started, and the worker that rendered it (this process) is still here to say so.
    expect(chain.calls()).to.have.length(0);
  });

  it('refuses costly step instructions, guards and paths at save time (400)', async () => {
    const { env, org } = suite;
    const save = (step: Record<string, unknown>) =>
      as(env, org.admin.token).post(org.path('/chains'), {
        name: 'Chain',
        description: 'd',
        llmInstructions: 'x',
        steps: [{ stepOrder: 1, instructions: 'Go', ...step }],
      });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { instructions: CUBED.replaceAll('body.a', 'input.a') },
        /instructions: .*outside the current element/,
      ],
      [{ runIf: 'input.a[.x in input.b[.y]]' }, /runIf: .*work would multiply/],
      [{ failBeforeRunningIf: `input.n == 1${' || input.n == 1'.repeat(70)}` }, /EXPRESSION_MAX_CHARS/],
      [{ forEachElement: '$.input.items[?(@.name.match("(a+)+$"))]' }, /forEachElement: .*no method calls/],
    ];
    for (const [step, message] of cases) {
      const res = await save(step).expect(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.message, JSON.stringify(step)).to.match(message);
    }
  });

  it('fails the run whose state makes the instructions render past the output limit, before any model call', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        instructions: 'Summarise: {{#each input.items}}{{../input.text}}{{/each}}',
        inputSchema: obj({ items: { type: 'array' }, text: str }),
      },
    ]);
    const { runId } = await startRun(env, org, chain.chainId, {
      payload: { items: new Array(1000).fill(0), text: 'y'.repeat(2000) },
    });
    const run = await finished(env, org, chain.chainId, runId, 120_000);
    expect(run.status).to.equal('failed');
    expect(run.statusMessage).to.match(/instructions could not be rendered: .*TEMPLATE_MAX_OUTPUT_CHARS/);
    expect(chain.calls()).to.have.length(0);
  });

  it('answers the backtracking filePattern with a 400 at once, and matches plain globs as before', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const file = await uploadFile(
      env,
      org,
      kb,
      'minutes-q3-board.txt',
      'The board met in the third quarter.',
    );
    expect((await settled(env, org, kb, file.fileId)).status).to.equal('READY');
    const attack = `filePattern=${encodeURIComponent('+(+(*))#')}`;
    for (const path of [
      `/knowledgebases/${kb}/search?q=hello&${attack}`,
      `/knowledgebases/search?q=hello&${attack}`,
    ]) {
      const res = await as(env, org.chat.token).get(org.path(path)).expect(400);
      expect(res.body.error.code).to.equal('invalid_pattern');
      expect(res.body.error.message).to.match(/extended globs/);
    }
    const hits = async (pattern: string) => {
      const res = await as(env, org.chat.token)
        .get(org.path(`/knowledgebases/${kb}/search?q=board&filePattern=${encodeURIComponent(pattern)}`))
        .expect(200);
      return (res.body.items as Array<{ fileName: string }>).map((h) => h.fileName);
    };
    expect(await hits('*BOARD*')).to.include('minutes-q3-board.txt');
    expect(await hits('*a*a*a*a*b')).to.deep.equal([]);
    expect(await hits('minutes-q?-*.{txt,md}')).to.include('minutes-q3-board.txt');
    const tooMany = await as(env, org.chat.token)
      .get(org.path(`/knowledgebases/${kb}/search?q=board&filePattern=${'*a'.repeat(21)}`))
      .expect(400);
    expect(tooMany.body.error.message).to.match(/PATTERN_MAX_WILDCARDS/);
  });
});
