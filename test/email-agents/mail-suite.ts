import { randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { workflowIds, type InboundEmailResult } from '@contracts';
import { startInboundMail } from '@lib/email-agents/listen';
import { messageKeyOf } from '@lib/email-agents/mime';
import { testEnv } from '@test/helpers/env';
import { as, type TestOrg } from '@test/helpers/org';
import { useWorkerAndOrg } from '@test/helpers/worker';

export const rand = () => randomBytes(5).toString('hex');

export interface MailAgent {
  agentId: string;
  model: string;
  address: string;
}

/**
 * The shared setup of the email-agent suites: a worker, a fresh 'Mail Org' per test, and an
 * inbound SMTP listener for the suite. Call inside a describe; `suite.env`/`suite.org` are set
 * in the hooks, the helpers read them when called.
 */
export function useMailSuite() {
  const suite = useWorkerAndOrg('Mail Org');
  let listener: Awaited<ReturnType<typeof startInboundMail>>;
  before(async () => {
    listener = await startInboundMail((await testEnv()).deps, 0);
  });
  after(() => listener?.close());

  /** An agent with an address (created through the API, so the address is claimed as in production). */
  async function mailAgent(o: TestOrg, fields: Record<string, unknown> = {}): Promise<MailAgent> {
    const model = `test-model-${rand()}`;
    const address = `agent-${rand()}@agents.example.test`;
    const res = await as(suite.env, o.admin.token)
      .post(o.path('/agents'), {
        name: 'Mail Helper',
        description: 'answers mail',
        instructions: 'Answer mail.',
        model,
        emailAddress: address,
        ...fields,
      })
      .expect(201);
    return { agentId: res.body.id as string, model, address };
  }

  /** A real SMTP client delivering to the listener. */
  const send = (message: Mail.Options) =>
    nodemailer
      .createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true })
      .sendMail(message);

  const handleOf = (o: TestOrg, agent: MailAgent, messageId: string) =>
    suite.env.deps.temporal.client.workflow.getHandle(
      workflowIds.inboundEmail(
        o.organizationId,
        agent.agentId,
        messageKeyOf(messageId.slice(1, -1), new Uint8Array()),
      ),
    );
  const outcome = (o: TestOrg, agent: MailAgent, messageId: string) =>
    handleOf(o, agent, messageId).result() as Promise<InboundEmailResult>;

  /** Replies the relay received for `address`, parsed, in arrival order. */
  const repliesTo = (address: string) =>
    Promise.all(
      suite.env.smtp.messages.filter((m) => m.to.includes(address)).map((m) => simpleParser(m.raw)),
    );
  const envelopesTo = (address: string) => suite.env.smtp.messages.filter((m) => m.to.includes(address));

  const messagesOf = async (o: TestOrg, token: string, conversationId: string) =>
    (
      await as(suite.env, token)
        .get(o.path(`/conversations/${conversationId}`))
        .expect(200)
    ).body as {
      title: string;
      creatorUserId: string;
      messages: Array<{ role: string; content: Array<{ text: string }> }>;
    };

  return { suite, mailAgent, send, handleOf, outcome, repliesTo, envelopesTo, messagesOf };
}
