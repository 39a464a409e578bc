import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import request from 'supertest';
import { workflowIds, type InboundEmailResult } from '@contracts';
import { messageKeyOf } from '@lib/email-agents/mime';
import { freePort } from '@test/helpers/api-process';
import { createRunnableChain, finished, obj, startRun, type Run } from '@test/helpers/chains';
import { testEnv } from '@test/helpers/env';
import { startHostileStack, type HostileStack } from '@test/helpers/hostile';
import { docxBomb, docxLaughs, pdfOfPages } from '@test/helpers/hostile-files';
import { createKb, settled, uploadFile } from '@test/helpers/kb';
import { eventually } from '@test/helpers/wait';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';

/*
 * Issue 32, end to end: each case sends what a hostile (or careless) tenant could send to the service as it
 * ships — the API and the worker each in its own process — and checks that the tenant gets a clear 4xx or error
 * status while `/healthz` keeps answering, another organization's chat turn is answered, and the worker process
 * is the one that started. The budgets themselves are tested closer to their code; this suite is the promise.
 */
describe('hostile input never takes the service down', function () {
  this.timeout(600_000);
  let stack: HostileStack;
  let attacker: TestOrg;
  let inboundSmtpPort: number;
  const rand = () => randomBytes(5).toString('hex');

  before(async () => {
    const base = await testEnv();
    inboundSmtpPort = await freePort();
    stack = await startHostileStack(base, { INBOUND_SMTP_PORT: String(inboundSmtpPort) });
    attacker = await createTestOrg(base, 'Hostile Org');
  });
  after(async () => stack?.stop());

  const api = (token = attacker.admin.token) => as(stack.env, token);

  /** A webhook of the attacker's with one handler running `chainId`; the handler's answer as it came. */
  async function webhookFor(chainId: string, inputMapping?: Record<string, string>) {
    const webhook = await api().post(attacker.path('/webhooks'), { name: 'Hook' }).expect(201);
    const webhookId = webhook.body.webhookId as string;
    const handler = await api().post(attacker.path(`/webhooks/${webhookId}/handlers`), {
      handlerType: 'action-chain',
      actionChainId: chainId,
      instructions: 'Handle it',
      ...(inputMapping && { inputMapping }),
    });
    return { webhookId, handler };
  }

  describe('patterns', () => {
    const extglob = encodeURIComponent('+(+(*))#');

    it('refuses a backtracking filePattern in a knowledge base search without freezing the API', async () => {
      const kb = await createKb(stack.env, attacker);
      const file = await uploadFile(stack.env, attacker, kb, 'minutes-q3-board.txt', 'The board met.');
      expect((await settled(stack.env, attacker, kb, file.fileId, 120_000)).status).to.equal('READY');
      const res = await stack.survives(() =>
        api(attacker.chat.token).get(
          attacker.path(`/knowledgebases/${kb}/search?q=hello&filePattern=${extglob}`),
        ),
      );
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.be.a('string');
      expect(res.body.error.message).to.match(/filePattern/);
    });

    it('refuses the same pattern in the global search, which reaches other organizations', async () => {
      const res = await stack.survives(() =>
        api(attacker.chat.token).get(attacker.path(`/knowledgebases/search?q=hello&filePattern=${extglob}`)),
      );
      expect(res.status).to.equal(400);
      expect(res.body.error.message).to.match(/filePattern/);
    });
    it("matches a step schema's catastrophic pattern against a long payload in linear time", async () => {
      const chain = await createRunnableChain(stack.env, attacker, [
        {
          stepOrder: 1,
          inputSchema: { type: 'object', properties: { message: { type: 'string', pattern: '^(a+)+$' } } },
        },
      ]);
      const res = await stack.survives(() =>
        api(attacker.chat.token).post(attacker.path(`/chains/${chain.chainId}/run`), {
          payload: { message: `${'a'.repeat(100_000)}!` },
        }),
      );
      expect(res.status).to.equal(400);
      expect(res.body.error.message).to.contain('must match pattern');
    });
  });

  describe('files', () => {
    const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    const cases = [
      { name: 'bomb.docx', bytes: () => docxBomb(), type: DOCX, limit: /KB_ZIP_MAX_RATIO/ },
      { name: 'laughs.docx', bytes: () => docxLaughs(), type: DOCX, limit: /DTD/ },
      {
        name: 'pages.pdf',
        bytes: () => pdfOfPages(6000),
        type: 'application/pdf',
        limit: /KB_PDF_MAX_PAGES/,
      },
    ];
    for (const c of cases)
      it(`ends ${c.name} in ERROR naming the limit, and the worker parses on`, async () => {
        const kb = await createKb(stack.env, attacker);
        const file = await stack.survives(async () => {
          const uploaded = await uploadFile(stack.env, attacker, kb, c.name, c.bytes(), c.type);
          return settled(stack.env, attacker, kb, uploaded.fileId, 300_000);
        });
        expect(file.status).to.equal('ERROR');
        expect(file.statusMessage).to.match(c.limit);
      });
  });

  describe('fan-out', () => {
    const items = (n: number) => Array.from({ length: n }, () => 0);
    const fanOutChain = async () => {
      const chain = await createRunnableChain(stack.env, attacker, [
        { stepOrder: 1, name: 'each', forEachElement: '$.input.items', instructions: 'Item {{element}}' },
      ]);
      chain.answer({ content: 'ok' });
      return chain;
    };

    it('refuses a run whose payload holds 20,000 elements to fan out over (400 fanout_too_large)', async () => {
      const chain = await fanOutChain();
      const res = await stack.survives(() =>
        api(attacker.chat.token).post(attacker.path(`/chains/${chain.chainId}/run`), {
          payload: { items: items(20_000) },
        }),
      );
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('fanout_too_large');
      expect(chain.calls()).to.have.length(0);
    });

    it('fails the run of an anonymous webhook delivery of 120,000 elements before any model call', async () => {
      const chain = await fanOutChain();
      const { webhookId, handler } = await webhookFor(chain.chainId);
      expect(handler.status).to.equal(201);
      const run = await stack.survives(async () => {
        await request(stack.api.url)
          .post(attacker.path(`/webhooks/${webhookId}/execute`))
          .send({ items: items(120_000) })
          .expect(200);
        return eventually(async () => {
          const runs = await api()
            .get(attacker.path(`/chains/${chain.chainId}/runs`))
            .expect(200);
          const [first] = runs.body.items as Run[];
          return first?.status === 'failed' && first;
        }, 300_000);
      });
      expect(run.statusMessage).to.contain('120000 elements').and.contain('CHAIN_FANOUT_MAX');
      expect(chain.calls()).to.have.length(0);
    });
  });

  describe('mail identity', () => {
    /** The agent mail domain of the test stack (AGENT_EMAIL_DOMAINS in stack/test-stack.mjs). */
    const domain = 'agents.example.test';
    const agentBody = (emailAddress: string) => ({
      name: 'Mail Helper',
      description: 'answers mail',
      instructions: 'Answer mail.',
      model: `test-model-${rand()}`,
      emailAddress,
      emailFilters: 'all',
    });

    it("refuses an agent address outside the agent mail domains, such as another organization's owner's", async () => {
      const res = await stack.survives(() =>
        api().post(attacker.path('/agents'), agentBody(stack.bystander.owner.email)),
      );
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('email_domain_not_allowed');
    });

    it('does not act as a member on mail whose From is forged', async () => {
      const created = await api()
        .post(attacker.path('/agents'), agentBody(`desk-${rand()}@${domain}`))
        .expect(201);
      const agent = created.body as { id: string; emailAddress: string };
      const messageId = `forged-${rand()}@example.test`;
      const outcome = await stack.survives(async () => {
        await nodemailer
          .createTransport({ host: '127.0.0.1', port: inboundSmtpPort, secure: false, ignoreTLS: true })
          .sendMail({
            from: attacker.chat.email,
            to: agent.emailAddress,
            envelope: { from: `mallory-${rand()}@elsewhere.example.test`, to: agent.emailAddress },
            subject: 'Run the report',
            text: 'Please run every tool you have.',
            messageId: `<${messageId}>`,
          });
        const id = workflowIds.inboundEmail(
          attacker.organizationId,
          agent.id,
          messageKeyOf(messageId, new Uint8Array()),
        );
        return (await stack.env.deps.temporal.client.workflow.getHandle(id).result()) as InboundEmailResult;
      });
      expect(outcome.status).to.equal('refused');
      expect((outcome as { reason: string }).reason).to.match(/not authenticated/);
      const conversations = await api(attacker.owner.token)
        .get(attacker.path(`/conversations?all=true&agentId=${agent.id}`))
        .expect(200);
      expect(conversations.body.items).to.deep.equal([]);
    });
  });
  describe('the smaller items', () => {
    it('runs the real unsigned delivery after a stranger sent its event id first', async () => {
      const chain = await createRunnableChain(stack.env, attacker, [
        {
          stepOrder: 1,
          instructions: 'Handle {{input.message}}',
          inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
        },
      ]);
      chain.answer({ content: 'handled' });
      const { webhookId, handler } = await webhookFor(chain.chainId, { message: '{{body.text}}' });
      expect(handler.status).to.equal(201);
      const send = (text: string) =>
        request(stack.api.url)
          .post(attacker.path(`/webhooks/${webhookId}/execute`))
          .set('webhook-id', 'evt_paid_1')
          .send({ text })
          .expect(200);
      const handled = await stack.survives(async () => {
        await send('forged first');
        await send('the real payment');
        return eventually(async () => {
          const runs = await api()
            .get(attacker.path(`/chains/${chain.chainId}/runs`))
            .expect(200);
          const done = (runs.body.items as Run[]).filter((r) => r.status === 'success');
          return done.length === 2 && done.map((r) => (r.state.input as { message: string }).message);
        }, 120_000);
      });
      expect(handled.sort()).to.deep.equal(['forged first', 'the real payment']);
    });

    it('refuses an upload URL for more bytes than a file may have (400 file_too_large)', async () => {
      const kb = await createKb(stack.env, attacker);
      const res = await stack.survives(() =>
        api().post(attacker.path(`/knowledgebases/${kb}/files/upload-url`), {
          fileName: 'huge.txt',
          contentType: 'text/plain',
          sizeBytes: 5 * 1024 ** 3,
        }),
      );
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('file_too_large');
    });

    it('refuses a copy into another organization made with an API key (403 session_required)', async () => {
      const kb = await createKb(stack.env, attacker);
      const res = await stack.survives(() =>
        api(attacker.apiKey).post(attacker.path(`/knowledgebases/${kb}/copy-to`), {
          toOrganizationId: stack.bystander.organizationId,
        }),
      );
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('session_required');
    });
  });

  describe('templates and expressions', () => {
    const cubed = '{{#each body.a}}{{#each @root.body.a}}{{#each @root.body.a}}.{{/each}}{{/each}}{{/each}}';

    async function chainHook(mapping: Record<string, string>) {
      const chain = await createRunnableChain(stack.env, attacker, [
        {
          stepOrder: 1,
          instructions: 'Read {{input.text}}',
          inputSchema: obj({ text: { type: 'string' } }, []),
        },
      ]);
      return { chain, ...(await webhookFor(chain.chainId, mapping)) };
    }

    it('refuses the webhook mapping that iterates the body inside itself, when it is saved', async () => {
      const { handler } = await stack.survives(() => chainHook({ text: cubed }));
      expect(handler.status).to.equal(400);
      expect(handler.body.error.message).to.match(/outside the current element/);
    });

    it('fails the delivery whose body makes a saved mapping render past its budget; the worker lives on', async () => {
      const { chain, webhookId } = await chainHook({ text: '{{#each body.a}}{{../body.s}}{{/each}}' });
      const outcome = await stack.survives(async () => {
        // Anonymous, as the attack: 40,000 × 5,000 characters would be 200 MB of text.
        await request(stack.env.app)
          .post(attacker.path(`/webhooks/${webhookId}/execute`))
          .send({ a: new Array(40_000).fill(0), s: 'x'.repeat(5_000) })
          .expect(200);
        return eventually(async () => {
          const log = await api()
            .get(attacker.path(`/webhooks/${webhookId}/deliveries`))
            .expect(200);
          const id = log.body.items[0]?.deliveryId as string | undefined;
          if (!id) return undefined;
          const detail = await api()
            .get(attacker.path(`/webhooks/${webhookId}/deliveries/${id}`))
            .expect(200);
          const [run] = detail.body.handlerRuns as Array<{ status: string; statusMessage: string | null }>;
          // The delivery log shows an execution not yet decided as pending.
          return run && run.status !== 'pending' && run;
        }, 120_000);
      });
      expect(outcome).to.include({ status: 'failed' });
      expect(outcome.statusMessage).to.match(/TEMPLATE_MAX_OUTPUT_CHARS/);
      expect(chain.calls()).to.have.length(0);
    });

    it('fails the chain run whose input makes the step instructions iterate past the budget', async () => {
      const chain = await createRunnableChain(stack.env, attacker, [
        {
          stepOrder: 1,
          instructions: '{{#each input.rows}}{{#each this}}.{{/each}}{{/each}}',
          inputSchema: obj({ rows: { type: 'array' } }),
        },
      ]);
      const run = await stack.survives(async () => {
        const rows = new Array(500).fill(new Array(500).fill(0));
        const { runId } = await startRun(stack.env, attacker, chain.chainId, { payload: { rows } });
        return finished(stack.env, attacker, chain.chainId, runId, 120_000);
      });
      expect(run.status).to.equal('failed');
      expect(run.statusMessage).to.match(/TEMPLATE_MAX_ITERATIONS/);
      expect(chain.calls()).to.have.length(0);
    });
  });
});
