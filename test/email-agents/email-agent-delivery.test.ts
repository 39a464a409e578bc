import { expect } from 'chai';
import type Mail from 'nodemailer/lib/mailer';
import { WORKFLOWS, type InboundEmailInput } from '@contracts';
import { createTestAgent } from '@test/helpers/agents';
import type { TestEnv } from '@test/helpers/env';
import { createKb, settled } from '@test/helpers/kb';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { rand, useMailSuite } from '@test/email-agents/mail-suite';

describe('email-driven agents', () => {
  const { suite, mailAgent, send, handleOf, outcome, repliesTo, messagesOf } = useMailSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  it('puts attachments that pass the file-type filter into the knowledge base, where they become READY', async () => {
    const kbId = await createKb(env, org);
    const agent = await mailAgent(org, {
      emailFilters: 'all',
      emailAttachmentsToKnowledgeBaseId: kbId,
      emailAttachmentsFileTypeFilter: 'txt, md',
    });
    env.llm.on({ model: agent.model }, { content: 'Filed.' });
    const messageId = `<a-${rand()}@example.test>`;
    await send({
      from: org.chat.email,
      to: agent.address,
      subject: 'Files',
      text: 'Please file these.',
      messageId,
      attachments: [
        { filename: 'notes.txt', content: 'The launch code word is pineapple.' },
        {
          filename: 'readme.md',
          content: '# Readme\n\nShip on Friday.',
          contentType: 'application/octet-stream',
        },
        { filename: 'tool.exe', content: Buffer.from([0x4d, 0x5a, 0, 1]) },
      ],
    });
    const result = await outcome(org, agent, messageId);
    expect(result.status).to.equal('replied');
    const files = await eventually(async () => {
      const res = await as(env, org.admin.token)
        .get(org.path(`/knowledgebases/${kbId}/files`))
        .expect(200);
      const items = res.body.items as Array<{ fileId: string; fileName: string }>;
      return items.length === 2 && items;
    });
    expect(files.map((f) => f.fileName).sort()).to.deep.equal(['notes.txt', 'readme.md']);
    for (const f of files) expect((await settled(env, org, kbId, f.fileId)).status).to.equal('READY');
    const conv = await messagesOf(org, org.admin.token, result.conversationId!);
    expect(conv.messages[0]!.content[0]!.text).to.equal(
      `Subject: Files\n\nPlease file these.\n\n[Attached files added to knowledge base ${kbId}: notes.txt, readme.md]` +
        '\n\n[Attached files not added: tool.exe (file type not accepted)]',
    );
  });

  it('answers a message delivered several times exactly once', async () => {
    const agent = await mailAgent(org, { emailFilters: 'all' });
    env.llm.on({ model: agent.model }, { content: 'Only once.' });
    const messageId = `<d-${rand()}@example.test>`;
    const message: Mail.Options = {
      from: org.chat.email,
      to: agent.address,
      subject: 'Dup',
      text: 'once?',
      messageId,
    };
    await send(message);
    const handle = handleOf(org, agent, messageId);
    expect((await handle.result()).status).to.equal('replied');
    // A sender retrying after a lost acknowledgement, and two relays delivering at once.
    await send(message);
    await Promise.all([send(message), send(message)]);
    expect(await repliesTo(org.chat.email)).to.have.length(1);
    expect(env.llm.chatRequests.filter((r) => r.model === agent.model)).to.have.length(1);

    // Past Temporal's retention the workflow id is free again: the stored record still makes it a duplicate.
    const history = await handle.fetchHistory();
    const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    const input = JSON.parse(Buffer.from(payload.data!).toString('utf8')) as InboundEmailInput;
    const again = await env.deps.temporal.client.workflow.execute(WORKFLOWS.inboundEmail, {
      workflowId: `${handle.workflowId}-after-retention`,
      taskQueue: env.config.temporal.taskQueue,
      args: [input],
    });
    expect(again).to.deep.equal({ status: 'duplicate', reason: 'this message was delivered before' });
    expect(await repliesTo(org.chat.email)).to.have.length(1);
  });

  it("counts a mail's turn among the organization's running turns, and never refuses it", async () => {
    const admission = env.deps.services.admission;
    const runningTurns = async () => (await admission.usage(org.organizationId)).turns.unfinished;
    const agent = await mailAgent(org, { emailFilters: 'all' });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    env.llm.on({ model: agent.model }, async () => {
      await held;
      return { content: 'Counted.' };
    });
    // The organization is at its bound: the mail is still answered, and its turn takes the one slot.
    await admission.setLimit(org.organizationId, 'turns', 1);
    try {
      const messageId = `<t-${rand()}@example.test>`;
      await send({ from: org.chat.email, to: agent.address, subject: 'Count me', text: 'hi', messageId });
      await eventually(async () => (await runningTurns()) === 1);
      const { agentId: person } = await createTestAgent(env, org.organizationId);
      const refused = await as(env, org.owner.token)
        .post(org.path('/conversations'), { agentId: person, message: 'me too' })
        .expect(429);
      expect(refused.body.error.code).to.equal('too_many_turns');
      release();
      expect((await outcome(org, agent, messageId)).status).to.equal('replied');
      await eventually(async () => (await runningTurns()) === 0);
    } finally {
      release();
      await admission.setLimit(org.organizationId, 'turns', null);
    }
  });

  it('keeps organizations apart: membership, threads and conversations belong to one organization', async () => {
    const other = await createTestOrg(env, 'Other Mail Org');
    const mine = await mailAgent(org, { emailFilters: 'all' });
    const theirs = await mailAgent(other, { emailFilters: 'all' });
    env.llm.on({ model: mine.model }, { content: 'From org one.' });
    env.llm.on({ model: theirs.model }, { content: 'From org two.' });

    // A member of the other organization only is a stranger here.
    const foreign = `<x1-${rand()}@example.test>`;
    await send({ from: other.owner.email, to: mine.address, subject: 'Hi', text: 'hi', messageId: foreign });
    expect((await outcome(org, mine, foreign)).reason).to.equal(
      'the sender is not a member of the organization',
    );

    // A person in both organizations: a reply that names org one's thread starts a new conversation in org two.
    const account = (await env.deps.repos.accounts.findByEmail(org.chat.email))!;
    await env.deps.repos.tenant(other.organizationId).members.add(account, 'chat');
    const start = `<x2-${rand()}@example.test>`;
    await send({ from: org.chat.email, to: mine.address, subject: 'Plan', text: 'one', messageId: start });
    const first = await outcome(org, mine, start);
    const crossing = `<x3-${rand()}@example.test>`;
    await send({
      from: org.chat.email,
      to: theirs.address,
      subject: 'Re: Plan',
      text: 'two',
      messageId: crossing,
      inReplyTo: `<${first.replyMessageId}>`,
      references: [start, `<${first.replyMessageId}>`],
    });
    const second = await outcome(other, theirs, crossing);
    expect(second.status).to.equal('replied');
    expect(second.conversationId).to.not.equal(first.conversationId);
    expect((await messagesOf(org, org.owner.token, first.conversationId!)).messages).to.have.length(2);
    await as(env, other.owner.token)
      .get(other.path(`/conversations/${first.conversationId}`))
      .expect(404);
    const theirsConv = await messagesOf(other, other.owner.token, second.conversationId!);
    expect(theirsConv.messages.map((m) => m.content[0]!.text)).to.deep.equal([
      'Subject: Re: Plan\n\ntwo',
      'From org two.',
    ]);
    expect((await repliesTo(org.chat.email)).map((m) => m.text!.trim())).to.deep.equal([
      'From org one.',
      'From org two.',
    ]);
  });
});
