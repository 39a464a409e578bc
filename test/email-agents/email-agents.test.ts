import { expect } from 'chai';
import type Mail from 'nodemailer/lib/mailer';
import type { TestEnv } from '@test/helpers/env';
import { messageKeyOf } from '@lib/email-agents/mime';
import { recordHistory } from '@test/helpers/histories';
import { as, type TestOrg } from '@test/helpers/org';
import { rand, useMailSuite } from '@test/email-agents/mail-suite';

describe('email-driven agents', () => {
  const { suite, mailAgent, send, handleOf, outcome, repliesTo, envelopesTo, messagesOf } = useMailSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  it('answers a member from the agent address, threaded, and continues the conversation when they reply', async () => {
    const agent = await mailAgent(org, {
      emailFilters: 'all',
      emailCcTo: 'cc1@copies.example.test, cc2@copies.example.test',
      emailBccTo: 'audit@copies.example.test',
      emailReplyTo: 'team@agents.example.test',
    });
    env.llm.on({ model: agent.model }, { content: 'Revenue was 12.' }, 1);
    env.llm.on(
      { model: agent.model },
      (body) => ({ content: `Last year: 9 (${body.messages.length} messages).` }),
      1,
    );
    // The relay refuses the first two attempts (greylisting): the reply is retried and delivered once.
    env.smtp.rejectNext(2);
    const first = `<q1-${rand()}@example.test>`;
    await send({
      from: `Chad <${org.chat.email}>`,
      to: agent.address,
      subject: 'Quarterly numbers',
      text: 'What was the revenue?',
      messageId: first,
    });
    const one = await outcome(org, agent, first);
    expect(one.status).to.equal('replied');
    const [reply] = await repliesTo(org.chat.email);
    expect(await repliesTo(org.chat.email)).to.have.length(1);
    expect(reply!.from!.value[0]!.address).to.equal(agent.address);
    expect(reply!.subject).to.equal('Re: Quarterly numbers');
    expect(reply!.inReplyTo).to.equal(first);
    expect(reply!.references).to.equal(first);
    expect(reply!.messageId).to.equal(`<${one.replyMessageId}>`);
    expect(reply!.text!.trim()).to.equal('Revenue was 12.');
    expect((reply!.cc as { value: Array<{ address: string }> }).value.map((a) => a.address)).to.deep.equal([
      'cc1@copies.example.test',
      'cc2@copies.example.test',
    ]);
    expect(reply!.replyTo!.value[0]!.address).to.equal('team@agents.example.test');
    expect(reply!.headers.get('auto-submitted')).to.equal('auto-replied');
    // Bcc: on the envelope, never in the headers.
    expect(envelopesTo(org.chat.email)[0]!.to).to.include('audit@copies.example.test');
    expect(envelopesTo(org.chat.email)[0]!.raw).to.not.include('audit@copies.example.test');

    const conv = await messagesOf(org, org.admin.token, one.conversationId!);
    expect(conv.title).to.equal('Quarterly numbers');
    expect(conv.creatorUserId).to.equal(org.chat.userId);
    expect(conv.messages.map((m) => [m.role, m.content[0]!.text])).to.deep.equal([
      ['user', 'Subject: Quarterly numbers\n\nWhat was the revenue?'],
      ['assistant', 'Revenue was 12.'],
    ]);

    // The member answers the reply: same conversation, quoted text dropped, the thread carried on.
    const second = `<q2-${rand()}@example.test>`;
    await send({
      from: org.chat.email,
      to: agent.address,
      subject: 'Re: Re: Quarterly numbers',
      text: 'And last year?\n\nOn Monday, Mail Helper wrote:\n> Revenue was 12.\n',
      messageId: second,
      inReplyTo: reply!.messageId,
      references: [first, reply!.messageId!],
    });
    const two = await outcome(org, agent, second);
    expect(two).to.include({ status: 'replied', conversationId: one.conversationId });
    const after = await messagesOf(org, org.admin.token, one.conversationId!);
    expect(after.messages.map((m) => m.content[0]!.text)).to.deep.equal([
      'Subject: Quarterly numbers\n\nWhat was the revenue?',
      'Revenue was 12.',
      'And last year?',
      'Last year: 9 (4 messages).',
    ]);
    const replies = await repliesTo(org.chat.email);
    expect(replies).to.have.length(2);
    expect(replies[1]!.subject).to.equal('Re: Quarterly numbers');
    expect(replies[1]!.inReplyTo).to.equal(second);
    expect(replies[1]!.references).to.deep.equal([first, reply!.messageId, second]);
    await recordHistory(env, handleOf(org, agent, first).workflowId, 'email-reply');
  });

  it("continues a thread from a reply to any one of its mails, and forgets the agent's mail with the agent", async () => {
    const agent = await mailAgent(org, { emailFilters: 'all' });
    env.llm.on({ model: agent.model }, { content: 'Noted.' }, 3);
    const first = `<t1-${rand()}@example.test>`;
    await send({
      from: org.chat.email,
      to: agent.address,
      subject: 'Thread',
      text: 'One.',
      messageId: first,
    });
    const one = await outcome(org, agent, first);
    expect(one.status).to.equal('replied');
    const [reply] = await repliesTo(org.chat.email);
    // An answer naming only the agent's reply (In-Reply-To, no References): the reply's Message-ID was recorded.
    const second = `<t2-${rand()}@example.test>`;
    await send({
      from: org.chat.email,
      to: agent.address,
      subject: 'Re: Thread',
      text: 'Two.',
      messageId: second,
      inReplyTo: reply!.messageId,
    });
    expect(await outcome(org, agent, second)).to.include({
      status: 'replied',
      conversationId: one.conversationId,
    });
    // A follow-up to the member's own first mail: that mail's record names its conversation.
    const third = `<t3-${rand()}@example.test>`;
    await send({
      from: org.chat.email,
      to: agent.address,
      subject: 'Re: Thread',
      text: 'Three.',
      messageId: third,
      inReplyTo: first,
    });
    expect(await outcome(org, agent, third)).to.include({
      status: 'replied',
      conversationId: one.conversationId,
    });
    const texts = (await messagesOf(org, org.admin.token, one.conversationId!)).messages.map(
      (m) => m.content[0]!.text,
    );
    expect(texts).to.deep.equal(['Subject: Thread\n\nOne.', 'Noted.', 'Two.', 'Noted.', 'Three.', 'Noted.']);

    const records = env.deps.repos.tenant(org.organizationId).emailMessages;
    const keyOf = (id: string) => messageKeyOf(id.slice(1, -1), new Uint8Array());
    expect(await records.getInbound(agent.agentId, keyOf(first))).to.include({
      conversationId: one.conversationId,
    });
    await as(env, org.admin.token)
      .delete(org.path(`/agents/${agent.agentId}`))
      .expect(200);
    for (const id of [first, reply!.messageId!, third])
      expect(await records.getInbound(agent.agentId, keyOf(id)), id).to.equal(null);
  });

  it('takes mail from any member with emailFilters all, otherwise only from members with access to the agent', async () => {
    const open = await mailAgent(org, { emailFilters: 'all' });
    const restricted = await mailAgent(org, { emailFilters: 'access' });
    // The chat member is in no group that reaches these agents.
    await as(env, org.chat.token)
      .get(org.path(`/agents/${restricted.agentId}`))
      .expect(404);
    for (const a of [open, restricted])
      env.llm.on({ model: a.model }, { content: `Hello from ${a.address}` });

    const toOpen = `<f1-${rand()}@example.test>`;
    await send({ from: org.chat.email, to: open.address, subject: 'Hi', text: 'hi', messageId: toOpen });
    expect((await outcome(org, open, toOpen)).status).to.equal('replied');

    const toRestricted = `<f2-${rand()}@example.test>`;
    await send({
      from: org.chat.email,
      to: restricted.address,
      subject: 'Hi',
      text: 'hi',
      messageId: toRestricted,
    });
    expect(await outcome(org, restricted, toRestricted)).to.deep.equal({
      status: 'refused',
      reason: 'the sender may not use this agent',
    });
    // emailFilters left unset is not `all`: only members with access to the agent
    const unset = await mailAgent(org);
    const toUnset = `<f2u-${rand()}@example.test>`;
    await send({ from: org.chat.email, to: unset.address, subject: 'Hi', text: 'hi', messageId: toUnset });
    expect(await outcome(org, unset, toUnset)).to.deep.equal({
      status: 'refused',
      reason: 'the sender may not use this agent',
    });
    const fromOwner = `<f3-${rand()}@example.test>`;
    await send({
      from: org.owner.email,
      to: restricted.address,
      subject: 'Hi',
      text: 'hi',
      messageId: fromOwner,
    });
    expect((await outcome(org, restricted, fromOwner)).status).to.equal('replied');

    const [chatReply] = await repliesTo(org.chat.email);
    expect(chatReply!.text!.trim()).to.equal(`Hello from ${open.address}`);
    // Another member answering in that thread (say, copied on it) gets a conversation of their own.
    const joining = `<f4-${rand()}@example.test>`;
    await send({
      from: org.owner.email,
      to: open.address,
      subject: 'Re: Hi',
      text: 'me too',
      messageId: joining,
      inReplyTo: chatReply!.messageId,
    });
    const [mine, theirs] = await Promise.all([outcome(org, open, toOpen), outcome(org, open, joining)]);
    expect(theirs.status).to.equal('replied');
    expect(theirs.conversationId).to.not.equal(mine.conversationId);
    expect((await messagesOf(org, org.owner.token, theirs.conversationId!)).creatorUserId).to.equal(
      org.owner.userId,
    );
    expect((await repliesTo(org.owner.email)).map((m) => m.text!.trim())).to.deep.equal([
      `Hello from ${restricted.address}`,
      `Hello from ${open.address}`,
    ]);
  });

  it('never answers strangers, automatic mail, bounces or other agents', async () => {
    const agent = await mailAgent(org, { emailFilters: 'all' });
    const other = await mailAgent(org, { emailFilters: 'all' });
    env.llm.on({ model: agent.model }, { content: 'should not be sent' });
    const stranger = `stranger-${rand()}@elsewhere.example.test`;
    const cases: Array<[Mail.Options, string]> = [
      [{ from: stranger }, 'refused: the sender is not a member of the organization'],
      [
        { from: org.chat.email, headers: { 'Auto-Submitted': 'auto-replied' } },
        'ignored: an automatic message (Auto-Submitted: auto-replied)',
      ],
      [
        { from: org.chat.email, headers: { 'List-Id': '<team.lists.example.test>' } },
        'ignored: mailing-list mail',
      ],
      [{ from: other.address }, 'ignored: the sender is an agent (agents do not answer agents by mail)'],
      [
        { from: org.chat.email, envelope: { from: '', to: agent.address } },
        'ignored: a bounce or notification (empty envelope sender)',
      ],
    ];
    const reasons: string[] = [];
    for (const [fields] of cases) {
      const messageId = `<s-${rand()}@example.test>`;
      await send({ to: agent.address, subject: 'Out of office', text: 'Away', messageId, ...fields });
      const result = await outcome(org, agent, messageId);
      reasons.push(`${result.status}: ${result.reason}`);
    }
    expect(reasons).to.deep.equal(cases.map(([, reason]) => reason));
    expect(envelopesTo(stranger)).to.deep.equal([]);
    expect(envelopesTo(org.chat.email)).to.deep.equal([]);
    expect(env.llm.chatRequests.filter((r) => r.model === agent.model)).to.deep.equal([]);
    const all = await as(env, org.owner.token).get(
      org.path(`/conversations?all=true&agentId=${agent.agentId}`),
    );
    expect(all.body.items).to.deep.equal([]);
  });

  it('refuses mail for an address no agent holds during the SMTP session (no bounce of ours)', async () => {
    const err = await send({
      from: org.chat.email,
      to: `nobody-${rand()}@agents.example.test`,
      subject: 'x',
      text: 'x',
    }).catch((e: unknown) => e as { responseCode?: number });
    expect((err as { responseCode?: number }).responseCode).to.equal(550);
  });
});
