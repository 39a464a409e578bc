import { expect } from 'chai';
import type { SendMailOptions } from 'nodemailer';
import { ReplyNotPossible, sendReply } from '@lib/email-agents/email-replies';

const input = {
  organizationId: 'org_1',
  agentId: 'agt_1',
  messageKey: '0123456789abcdef0123456789abcdef01234567',
  conversationId: 'cnv_1',
  requestId: 'req_1',
};
const agent = { name: 'Desk', emailAddress: 'desk@agents.example.test' };
const inbound = {
  messageId: 'question@example.test',
  fromAddress: 'member@example.test',
  subject: 'Numbers',
  references: [],
};
const reply = {
  content: [
    { type: 'text', text: 'Hello ' },
    { type: 'text', text: 'there.' },
  ],
};

/** A tenant holding the given agent, inbound mail and reply, recording what the reply writes and sends. */
function deps(found: { agent?: object | null; inbound?: object | null; reply?: object | null } = {}) {
  const writes: unknown[][] = [];
  const sent: SendMailOptions[] = [];
  const tenant = {
    emailMessages: {
      getInbound: () => Promise.resolve(found.inbound === undefined ? inbound : found.inbound),
      recordOutbound: (...args: unknown[]) => Promise.resolve(void writes.push(['recordOutbound', ...args])),
      setInbound: (...args: unknown[]) => Promise.resolve(void writes.push(['setInbound', ...args])),
    },
  };
  const repos = { tenant: () => tenant } as unknown as Parameters<typeof sendReply>[0]['repos'];
  const agents = { find: () => Promise.resolve((found.agent === undefined ? agent : found.agent) as never) };
  const conversations = {
    message: () => Promise.resolve((found.reply === undefined ? reply : found.reply) as never),
  };
  const mailer = { sendMail: (options: SendMailOptions) => Promise.resolve(void sent.push(options)) };
  return { deps: { repos, agents, conversations, mailer }, writes, sent };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'sent',
    (err: Error) =>
      err instanceof ReplyNotPossible ? err.message : `not a ReplyNotPossible: ${err.message}`,
  );

describe('sending the reply to an inbound mail', () => {
  it('sends the whole reply text from the agent, and records the reply before and after sending', async () => {
    const { deps: d, writes, sent } = deps();
    const messageId = 'reply-0123456789abcdef0123456789abcdef@agents.example.test';
    expect(await sendReply(d, input)).to.deep.equal({ messageId });
    expect(sent).to.have.length(1);
    expect(sent[0]!.text).to.equal('Hello there.');
    expect(sent[0]!.to).to.equal('member@example.test');
    expect(sent[0]!.inReplyTo).to.equal('<question@example.test>');
    expect(writes).to.deep.equal([
      ['recordOutbound', 'agt_1', messageId, 'cnv_1', 'req_1'],
      ['setInbound', 'agt_1', input.messageKey, { status: 'replied', replyMessageId: messageId }],
    ]);
  });

  it('sends nothing when the agent, its address, the sender or the reply is gone', async () => {
    const cases: Array<[Parameters<typeof deps>[0], string]> = [
      [{ agent: null }, 'the agent no longer has an email address'],
      [{ agent: { ...agent, emailAddress: null } }, 'the agent no longer has an email address'],
      [{ inbound: null }, 'the inbound mail has no sender to answer'],
      [{ inbound: { ...inbound, fromAddress: null } }, 'the inbound mail has no sender to answer'],
      [{ reply: null }, 'the conversation has no reply to send'],
    ];
    for (const [found, reason] of cases) {
      const { deps: d, writes, sent } = deps(found);
      expect(await refusal(sendReply(d, input))).to.equal(reason);
      expect(sent).to.deep.equal([]);
      expect(writes).to.deep.equal([]);
    }
  });
});
