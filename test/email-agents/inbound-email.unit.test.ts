import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { InboundEmailService } from '@lib/email-agents/inbound-email.service';
import { logSink } from './smtp-kit';

const messageKey = '0123456789abcdef0123456789abcdef01234567';
const requestId = 'email-0123456789abcdef0123456789abcdef';
const input = {
  organizationId: 'org_1',
  agentId: 'agt_1',
  messageKey,
  objectKey: 'email/org_1/agt_1/key/hash.eml',
  envelopeFrom: 'member@example.test',
};
const agent = { agentId: 'agt_1', emailAddress: 'desk@agents.example.test', emailFilters: 'all' };
const member = { organizationId: 'org_1', userId: 'usr_1', role: 'member' };

const crlf = (...lines: string[]) => Buffer.from(lines.join('\r\n'));
/** A mail from the member saying "See attached.", with these attachments: [content type, file name, body]. */
const mailWithFiles = (headers: string[], files: Array<[string, string, string]>) =>
  crlf(
    'From: member@example.test',
    ...headers,
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'See attached.',
    ...files.flatMap(([type, name, body]) => [
      '--b',
      `Content-Type: ${type}`,
      `Content-Disposition: attachment; filename="${name}"`,
      '',
      body,
    ]),
    '--b--',
    '',
  );
const question = crlf(
  'From: member@example.test',
  'To: desk@agents.example.test',
  'Subject: Numbers',
  'Message-ID: <q2@example.test>',
  'In-Reply-To: <reply-1@agents.example.test>',
  'References: <q1@example.test> <reply-1@agents.example.test>',
  '',
  'How many?',
  '',
  'On Mon, Desk wrote:',
  '> Forty.',
  '',
);

interface World {
  raw?: Buffer;
  agent?: object | null;
  claim?: { doc: object; created: boolean };
  thread?: { _id: string; agentId: string; creatorUserId: string } | null;
  access?: boolean;
  member?: object | null;
  agentAddresses?: string[];
  /** Files the knowledge-bases feature does not add (their knowledge base is gone). */
  kbFileMissing?: string[];
}

/** The service over one organization's records as `world` says, recording what it writes. */
function serviceIn(world: World = {}) {
  const writes: unknown[][] = [];
  const reads: string[] = [];
  const thread = world.thread ?? null;
  const tenant = {
    emailMessages: {
      claimInbound: (_agentId: string, _key: string, runId: string, fields: object) => {
        writes.push(['claimInbound', fields]);
        return Promise.resolve(world.claim ?? { doc: { runId, status: 'received' }, created: true });
      },
      setInbound: (_agentId: string, _key: string, set: object) =>
        Promise.resolve(void writes.push(['setInbound', set])),
      conversationOfThread: (_agentId: string, ids: string[]) => {
        writes.push(['conversationOfThread', ids]);
        return Promise.resolve(thread?._id ?? null);
      },
    },
  };
  // The agents, users and conversations features, as the service's ports see them.
  const agents = {
    find: () => Promise.resolve((world.agent === undefined ? agent : world.agent) as never),
  };
  const conversations = {
    // The port takes an id; the database would read a missing one as "any conversation of the organization".
    find: (_org: string, id: string) => {
      if (typeof id !== 'string') throw new Error(`conversations.find without an id: ${String(id)}`);
      return Promise.resolve((thread && id === thread._id ? thread : null) as never);
    },
    createForRequest: (_org: string, request: string, fields: object) => {
      writes.push(['createForRequest', request, fields]);
      return Promise.resolve({ _id: 'cnv_new', ...fields } as never);
    },
    putMessage: (_org: string, message: object) => Promise.resolve(void writes.push(['putMessage', message])),
    message: () => Promise.resolve(null),
  };
  const members = {
    memberByEmail: (_org: string, email: string) =>
      Promise.resolve(
        (email === 'member@example.test'
          ? world.member === undefined
            ? member
            : world.member
          : null) as never,
      ),
  };
  const repos = {
    tenant: () => tenant,
    agentEmails: {
      findAgentEmailCrossOrg: (address: string) =>
        Promise.resolve((world.agentAddresses ?? []).includes(address) ? { organizationId: 'org_1' } : null),
    },
  } as unknown as ConstructorParameters<typeof InboundEmailService>[0]['repos'];
  const log = logSink();
  const service = new InboundEmailService({
    repos,
    agents,
    members,
    conversations,
    access: { canAccessAgent: () => Promise.resolve(world.access ?? false) },
    objects: {
      read: (key: string) => {
        reads.push(key);
        return Promise.resolve(world.raw ?? question);
      },
    },
    kbFiles: {
      addFromBytes: (_org: string, knowledgeBaseId: string, file: { fileId: string }) => {
        writes.push(['addFromBytes', knowledgeBaseId, file]);
        return Promise.resolve(
          (world.kbFileMissing?.includes(file.fileId) ? null : { _id: file.fileId }) as never,
        );
      },
    },
    maxBytes: 1_000_000,
    trustedRelays: [],
    logger: log.logger,
  });
  const put = () => writes.find((w) => w[0] === 'putMessage')?.[1] as { text: string } | undefined;
  return { service, writes, reads, put, log };
}

describe('an inbound mail becoming a conversation', () => {
  it('starts a conversation titled by the subject, whose message is the subject and the whole text', async () => {
    const { service, writes, put } = serviceIn();
    expect(await service.prepare(input, 'run_1')).to.deep.equal({
      status: 'accepted',
      conversationId: 'cnv_new',
      requestId,
      userId: 'usr_1',
      attachments: 0,
    });
    expect(writes[0]).to.deep.equal([
      'claimInbound',
      {
        messageId: 'q2@example.test',
        fromAddress: 'member@example.test',
        subject: 'Numbers',
        references: ['q1@example.test', 'reply-1@agents.example.test', 'q2@example.test'],
      },
    ]);
    expect(writes).to.deep.include([
      'conversationOfThread',
      ['reply-1@agents.example.test', 'q1@example.test'],
    ]);
    expect(writes).to.deep.include([
      'createForRequest',
      requestId,
      { agentId: 'agt_1', title: 'Numbers', creatorUserId: 'usr_1', isBrowserTask: false },
    ]);
    expect(put()).to.deep.equal({
      conversationId: 'cnv_new',
      requestId,
      role: 'user',
      status: 'complete',
      text: 'Subject: Numbers\n\nHow many?\n\nOn Mon, Desk wrote:\n> Forty.',
    });
    expect(writes.at(-1)).to.deep.equal([
      'setInbound',
      { status: 'accepted', conversationId: 'cnv_new', requestId },
    ]);
  });

  it("continues the sender's own thread with only the new text, and starts another member's anew", async () => {
    const own = serviceIn({ thread: { _id: 'cnv_old', agentId: 'agt_1', creatorUserId: 'usr_1' } });
    expect(await own.service.prepare(input, 'run_1')).to.include({
      status: 'accepted',
      conversationId: 'cnv_old',
    });
    expect(own.put()).to.deep.include({ conversationId: 'cnv_old', text: 'How many?' });
    expect(own.writes.filter((w) => w[0] === 'createForRequest')).to.deep.equal([]);
    for (const thread of [
      { _id: 'cnv_old', agentId: 'agt_1', creatorUserId: 'usr_2' },
      { _id: 'cnv_old', agentId: 'agt_2', creatorUserId: 'usr_1' },
    ]) {
      const other = serviceIn({ thread });
      expect(await other.service.prepare(input, 'run_1')).to.include({ conversationId: 'cnv_new' });
      expect(other.put()?.text).to.match(/^Subject: Numbers\n\nHow many\?/);
    }
  });

  it('answers a redelivery as a duplicate, and a retried attempt with what the first one stored', async () => {
    const redelivered = serviceIn({ claim: { doc: { runId: 'run_0', status: 'accepted' }, created: false } });
    expect(await redelivered.service.prepare(input, 'run_1')).to.deep.equal({
      status: 'duplicate',
      reason: 'this message was delivered before',
    });
    const retried = serviceIn({
      claim: {
        doc: { runId: 'run_1', status: 'accepted', conversationId: 'cnv_old', requestId },
        created: false,
      },
      thread: { _id: 'cnv_old', agentId: 'agt_1', creatorUserId: 'usr_1' },
    });
    expect(await retried.service.prepare(input, 'run_1')).to.deep.equal({
      status: 'accepted',
      conversationId: 'cnv_old',
      requestId,
      userId: 'usr_1',
      attachments: 0,
    });
    expect(retried.put()).to.equal(undefined);
  });
});

describe('an inbound mail, retried or odd', () => {
  it('starts a new conversation when a retried attempt finds the one it made deleted', async () => {
    const retried = serviceIn({
      claim: {
        doc: { runId: 'run_1', status: 'accepted', conversationId: 'cnv_gone', requestId },
        created: false,
      },
    });
    expect(await retried.service.prepare(input, 'run_1')).to.deep.equal({
      status: 'accepted',
      conversationId: 'cnv_new',
      requestId,
      userId: 'usr_1',
      attachments: 0,
    });
    expect(retried.put()).to.include({ conversationId: 'cnv_new' });
  });

  it('records the last 50 ids of the thread, its own last; a mail without a Message-ID adds none', async () => {
    const refs = Array.from({ length: 60 }, (_, i) => `<r${i}@example.test>`);
    const long = serviceIn({
      raw: crlf(
        'From: member@example.test',
        'Message-ID: <own@example.test>',
        `References: ${refs.join(' ')}`,
        '',
        'Hi',
      ),
    });
    await long.service.prepare(input, 'run_1');
    const recorded = (long.writes[0]![1] as { references: string[] }).references;
    expect(recorded).to.have.length(50);
    expect(recorded[0]).to.equal('r11@example.test');
    expect(recorded.slice(-2)).to.deep.equal(['r59@example.test', 'own@example.test']);
    const anonymous = serviceIn({
      raw: crlf('From: member@example.test', 'References: <r1@example.test>', '', 'Hi'),
    });
    await anonymous.service.prepare(input, 'run_1');
    expect(anonymous.writes[0]).to.deep.equal([
      'claimInbound',
      { messageId: null, fromAddress: 'member@example.test', subject: '', references: ['r1@example.test'] },
    ]);
  });
});

describe('an inbound mail that becomes no conversation', () => {
  it('ignores mail for an agent without the address any more, automatic mail and mail from agents', async () => {
    const outcome = async (world: World, envelopeFrom = 'member@example.test') =>
      (await serviceIn(world).service.prepare({ ...input, envelopeFrom }, 'run_1')) as object;
    for (const gone of [{ ...agent, emailAddress: null }, null])
      expect(await outcome({ agent: gone })).to.deep.equal({
        status: 'ignored',
        reason: 'the agent no longer has this address',
      });
    expect(await outcome({}, '')).to.deep.equal({
      status: 'ignored',
      reason: 'a bounce or notification (empty envelope sender)',
    });
    expect(await outcome({ agentAddresses: ['member@example.test'] })).to.deep.equal({
      status: 'ignored',
      reason: 'the sender is an agent (agents do not answer agents by mail)',
    });
  });

  it('refuses a sender who is no member or may not use the agent, and logs why without addresses', async () => {
    const notMember = serviceIn({ member: null });
    expect(await notMember.service.prepare(input, 'run_1')).to.deep.equal({
      status: 'refused',
      reason: 'the sender is not a member of the organization',
    });
    expect(notMember.writes.at(-1)).to.deep.equal([
      'setInbound',
      { status: 'refused', reason: 'the sender is not a member of the organization' },
    ]);
    expect(notMember.log.lines.map((l) => [l.msg, l.organizationId, l.agentId, l.messageKey])).to.deep.equal([
      ['inbound mail refused', 'org_1', 'agt_1', messageKey],
    ]);
    expect(JSON.stringify(notMember.log.lines)).to.not.contain('member@example.test');
    const restricted = { agent: { ...agent, emailFilters: 'access' } };
    expect(await serviceIn(restricted).service.prepare(input, 'run_1')).to.deep.equal({
      status: 'refused',
      reason: 'the sender may not use this agent',
    });
    expect(await serviceIn({ ...restricted, access: true }).service.prepare(input, 'run_1')).to.include({
      status: 'accepted',
    });
  });
});

describe("an inbound mail's user message", () => {
  const withFiles = mailWithFiles(
    ['Subject: files'],
    [
      ['application/pdf', 'report.pdf', '%PDF-'],
      ['application/octet-stream', 'tool.exe', 'MZ'],
      ['application/octet-stream', 'data.xyz', 'x'],
    ],
  );

  it('says which attachments went into the knowledge base and which did not, and why', async () => {
    const filing = {
      ...agent,
      emailAttachmentsToKnowledgeBaseId: 'kb_1',
      emailAttachmentsFileTypeFilter: 'pdf,xyz',
    };
    const { service, put } = serviceIn({ raw: withFiles, agent: filing });
    expect(await service.prepare(input, 'run_1')).to.include({ status: 'accepted', attachments: 1 });
    expect(put()?.text).to.equal(
      'Subject: files\n\nSee attached.\n\n' +
        '[Attached files added to knowledge base kb_1: report.pdf]\n\n' +
        '[Attached files not added: tool.exe (file type not accepted), data.xyz (not a format knowledge bases read)]',
    );
    const notFiling = serviceIn({ raw: withFiles });
    expect(await notFiling.service.prepare(input, 'run_1')).to.include({ attachments: 0 });
    expect(notFiling.put()?.text).to.equal('Subject: files\n\nSee attached.');
  });

  it('stands in for an empty mail, and cuts one longer than a chat message', async () => {
    const empty = serviceIn({ raw: crlf('From: member@example.test', 'Subject:  ', '', '') });
    await empty.service.prepare(input, 'run_1');
    expect(empty.put()?.text).to.equal('(empty message)');
    const long = serviceIn({ raw: crlf('From: member@example.test', '', 'x'.repeat(100_050)) });
    await long.service.prepare(input, 'run_1');
    expect(long.put()?.text).to.equal(`${'x'.repeat(99_980)}\n[… cut]`);
    const exact = serviceIn({ raw: crlf('From: member@example.test', '', 'x'.repeat(100_000)) });
    await exact.service.prepare(input, 'run_1');
    expect(exact.put()?.text).to.equal('x'.repeat(100_000));
  });

  it('writes the subject trimmed, and neither a blank subject nor an empty body', async () => {
    const textOf = async (...headers: string[]) => {
      const world = serviceIn({ raw: crlf('From: member@example.test', ...headers, '', '') });
      await world.service.prepare(input, 'run_1');
      return world.put()?.text;
    };
    // Encoded words keep their spaces through mailparser (`_` is a space in Q encoding).
    expect(await textOf('Subject: =?UTF-8?Q?__Numbers__?=')).to.equal('Subject: Numbers');
    expect(await textOf('Subject: =?UTF-8?Q?___?=')).to.equal('(empty message)');
  });
});

describe("an inbound mail's attachments into the knowledge base", () => {
  const withFiles = mailWithFiles(
    [],
    [
      ['application/octet-stream', 'tool.exe', 'MZ'],
      ['application/pdf', 'report.pdf', '%PDF-'],
      ['text/plain', 'notes.txt', 'notes'],
    ],
  );
  // ids.ts's rule, written out: `kbf_` and 22 characters of the base64url SHA-256 of the parts, newline-joined.
  const fileIdOf = (index: number) =>
    `kbf_${createHash('sha256')
      .update(['org_1', 'agt_1', messageKey, String(index)].join('\n'))
      .digest('base64url')
      .slice(0, 22)}`;
  const filing = {
    ...agent,
    emailAttachmentsToKnowledgeBaseId: 'kb_1',
    emailAttachmentsFileTypeFilter: 'pdf,txt',
  };

  it('adds each accepted attachment under an id derived from the mail and its place in it, as the sender', async () => {
    const world = serviceIn({ raw: withFiles, agent: filing });
    expect(await world.service.ingestAttachments(input, 'usr_1')).to.deep.equal([fileIdOf(1), fileIdOf(2)]);
    const added = world.writes.filter((w) => w[0] === 'addFromBytes');
    expect(
      added.map(([, kb, f]) => [kb, { ...(f as object), bytes: String((f as { bytes: Buffer }).bytes) }]),
    ).to.deep.equal([
      [
        'kb_1',
        {
          fileId: fileIdOf(1),
          fileName: 'report.pdf',
          contentType: 'application/pdf',
          bytes: '%PDF-',
          creatorUserId: 'usr_1',
        },
      ],
      [
        'kb_1',
        {
          fileId: fileIdOf(2),
          fileName: 'notes.txt',
          contentType: 'text/plain',
          bytes: 'notes',
          creatorUserId: 'usr_1',
        },
      ],
    ]);
  });

  it('adds nothing for an agent gone or not filing attachments, and leaves out a file its knowledge base refused', async () => {
    for (const gone of [null, agent]) {
      const world = serviceIn({ raw: withFiles, agent: gone });
      expect(await world.service.ingestAttachments(input, 'usr_1')).to.deep.equal([]);
      // nor is the mail read from the object store (up to the size limit) for nothing
      expect([world.writes, world.reads]).to.deep.equal([[], []]);
    }
    const refused = serviceIn({ raw: withFiles, agent: filing, kbFileMissing: [fileIdOf(1)] });
    expect(await refused.service.ingestAttachments(input, 'usr_1')).to.deep.equal([fileIdOf(2)]);
  });
});
