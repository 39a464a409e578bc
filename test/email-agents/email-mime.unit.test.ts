import { expect } from 'chai';
import {
  attachmentAllowed,
  automaticMailReason,
  messageIdList,
  messageKeyOf,
  normaliseMessageId,
  rawHeader,
  replyMessageId,
  replySubject,
  stripQuotedReply,
  threadCandidates,
  threadKeyOf,
  titleOf,
} from '@lib/email-agents/mime';

const headers =
  (values: Record<string, string>) =>
  (name: string): string | null =>
    values[name] ?? null;

describe('agent mail helpers', () => {
  it('reads Message-IDs with or without brackets, and lists of them', () => {
    expect(normaliseMessageId(' <abc@x.test> ')).to.equal('abc@x.test');
    expect(normaliseMessageId('abc@x.test')).to.equal('abc@x.test');
    expect(normaliseMessageId('<>')).to.equal(null);
    expect(normaliseMessageId(undefined)).to.equal(null);
    expect(messageIdList('<a@x> <b@y>\r\n <c@z>')).to.deep.equal(['a@x', 'b@y', 'c@z']);
    expect(messageIdList(['<a@x>', '<b@y>'])).to.deep.equal(['a@x', 'b@y']);
    expect(messageIdList('a@x')).to.deep.equal(['a@x']);
  });

  it('keys a mail by its Message-ID, or by its bytes when it has none', () => {
    const raw = Buffer.from('Subject: x\r\n\r\nhello');
    expect(messageKeyOf('a@x', raw)).to.equal(messageKeyOf('a@x', Buffer.from('other bytes')));
    expect(messageKeyOf('a@x', raw)).to.equal(threadKeyOf('a@x'));
    expect(messageKeyOf(null, raw)).to.equal(messageKeyOf(null, Buffer.from(raw)));
    expect(messageKeyOf(null, raw)).to.not.equal(messageKeyOf(null, Buffer.from('Subject: y\r\n\r\nhello')));
    expect(messageKeyOf('a@x', raw)).to.match(/^[0-9a-f]{40}$/);
  });

  it('looks for the thread nearest first: In-Reply-To, then References from the newest', () => {
    expect(threadCandidates('<c@z>', '<a@x> <b@y> <c@z>')).to.deep.equal(['c@z', 'b@y', 'a@x']);
    expect(threadCandidates(undefined, undefined)).to.deep.equal([]);
  });

  it('reads a header of the raw header block, unfolding folded lines and stopping at the body', () => {
    const raw = Buffer.from('From: a@x\r\nMessage-ID:\r\n <id@x.test>\r\n\r\nMessage-ID: <body@x>\r\n');
    expect(rawHeader(raw, 'message-id')).to.equal('<id@x.test>');
    expect(rawHeader(Buffer.from('From: a@x\r\n\r\nMessage-ID: <b@x>'), 'Message-ID')).to.equal(null);
  });

  it('recognises mail no machine should answer', () => {
    expect(automaticMailReason('', headers({}))).to.match(/bounce/);
    expect(automaticMailReason('a@x', headers({ 'auto-submitted': 'auto-generated' }))).to.match(/automatic/);
    expect(automaticMailReason('a@x', headers({ 'auto-submitted': 'no' }))).to.equal(null);
    expect(automaticMailReason('a@x', headers({ precedence: 'bulk' }))).to.match(/bulk/);
    expect(automaticMailReason('a@x', headers({ 'list-id': '<l.x>' }))).to.match(/list/);
    expect(automaticMailReason('a@x', headers({}))).to.equal(null);
  });

  it('prefixes one Re:, titles without prefixes, and drops the quoted earlier message', () => {
    expect(replySubject('Re: RE: aw: Numbers')).to.equal('Re: Numbers');
    expect(replySubject('')).to.equal('Re: (no subject)');
    expect(titleOf('Fwd: Re: Numbers')).to.equal('Numbers');
    expect(titleOf(undefined)).to.equal('Email');
    expect(stripQuotedReply('Thanks!\n\nOn Mon, A wrote:\n> old\n> text\n')).to.equal('Thanks!');
    expect(stripQuotedReply('> only a quote')).to.equal('> only a quote');
    expect(stripQuotedReply('inline\n> quoted\nanswer')).to.equal('inline\n> quoted\nanswer');
  });

  it('lets attachments through by extension, every one when there is no filter', () => {
    expect(attachmentAllowed('Report.PDF', 'pdf,docx')).to.equal(true);
    expect(attachmentAllowed('tool.exe', 'pdf,docx')).to.equal(false);
    expect(attachmentAllowed('notes.txt', null)).to.equal(true);
    expect(attachmentAllowed('noextension', null)).to.equal(false);
  });
});

describe('agent mail helpers: Message-IDs and References (RFC 5322 section 3.6.4)', () => {
  it('takes off every bracket around a Message-ID and the space inside them, nothing within it', () => {
    expect(normaliseMessageId('<<abc@x.test>>')).to.equal('abc@x.test');
    expect(normaliseMessageId('< abc@x.test >')).to.equal('abc@x.test');
    expect(normaliseMessageId('id<1>@x.test')).to.equal('id<1>@x.test');
  });

  it('reads bracketed ids written without space between them, and bare ids from a list', () => {
    expect(messageIdList('<a@x.test><b@y.test>')).to.deep.equal(['a@x.test', 'b@y.test']);
    expect(messageIdList(['a@x.test', 'b@y.test'])).to.deep.equal(['a@x.test', 'b@y.test']);
  });

  it('looks at most 50 ids up: In-Reply-To and the 49 newest References', () => {
    const references = Array.from({ length: 60 }, (_, i) => `<r${i}@x.test>`).join(' ');
    const candidates = threadCandidates('<parent@x.test>', references);
    expect(candidates).to.have.length(50);
    expect(candidates[0]).to.equal('parent@x.test');
    expect(candidates[1]).to.equal('r59@x.test');
    expect(candidates[49]).to.equal('r11@x.test');
  });

  it("gives a reply a Message-ID in the agent's domain, fixed by the inbound mail's key", () => {
    const key = '0123456789abcdef0123456789abcdef01234567';
    expect(replyMessageId(key, 'desk@agents.example.test')).to.equal(
      'reply-0123456789abcdef0123456789abcdef@agents.example.test',
    );
  });
});

describe('agent mail helpers: the raw header block (RFC 5322 section 2.2)', () => {
  const raw = (text: string) => Buffer.from(text, 'latin1');

  it('reads headers of a message whose lines end in LF alone, and stops at its blank line', () => {
    const lf = raw('From: a@x.test\nSubject: one\n two\n\nMessage-ID: <body@x.test>\n');
    expect(rawHeader(lf, 'subject')).to.equal('one two');
    expect(rawHeader(lf, 'message-id')).to.equal(null);
    expect(rawHeader(raw('From: a@x.test\r\n\nMessage-ID: <body@x.test>'), 'message-id')).to.equal(null);
    expect(rawHeader(raw('From: a@x.test\n\r\nMessage-ID: <body@x.test>'), 'message-id')).to.equal(null);
  });

  it('reads a message that is all header, and nothing of one that starts with its blank line', () => {
    expect(rawHeader(raw('Message-ID: <a@x.test>'), 'message-id')).to.equal('<a@x.test>');
    expect(rawHeader(raw('\r\n\r\nMessage-ID: <body@x.test>'), 'message-id')).to.equal(null);
  });

  it('keeps the white space a fold starts with', () => {
    expect(rawHeader(raw('Subject: a\r\n b\r\n\r\n'), 'subject')).to.equal('a b');
  });

  it('reads only the first 256 KiB of a message', () => {
    const padded = raw(`X-Pad: ${'a'.repeat(256 * 1024)}\r\nMessage-ID: <late@x.test>\r\n\r\nbody`);
    expect(rawHeader(padded, 'message-id')).to.equal(null);
  });
});

describe('agent mail helpers: mail no machine answers (RFC 3834)', () => {
  const reason = (values: Record<string, string>) =>
    automaticMailReason('member@example.test', headers(values));

  it('takes an envelope sender of white space for an empty one (a bounce)', () => {
    expect(automaticMailReason(' ', headers({}))).to.equal(
      'a bounce or notification (empty envelope sender)',
    );
  });

  it('refuses each bulk Precedence, and answers any other', () => {
    for (const precedence of ['bulk', 'junk', 'list', 'auto_reply'])
      expect(reason({ precedence })).to.equal(`bulk or list mail (Precedence: ${precedence})`);
    expect(reason({ precedence: 'first-class' })).to.equal(null);
  });

  it('refuses list mail by List-Unsubscribe alone (RFC 2369), and auto-replies by either X- header', () => {
    expect(reason({ 'list-unsubscribe': '<mailto:leave@lists.example.test>' })).to.equal('mailing-list mail');
    expect(reason({ 'x-autoreply': 'yes' })).to.equal('an automatic reply');
    expect(reason({ 'x-autorespond': 'yes' })).to.equal('an automatic reply');
  });
});

describe('agent mail helpers: subjects', () => {
  it('takes off only whole reply prefixes at the start, with or without space after the colon', () => {
    expect(replySubject('RE:Numbers')).to.equal('Re: Numbers');
    expect(replySubject('Score: 3')).to.equal('Re: Score: 3');
    expect(replySubject('Results: final')).to.equal('Re: Results: final');
    expect(replySubject('Numbers  ')).to.equal('Re: Numbers');
    expect(replySubject(' ')).to.equal('Re: (no subject)');
    expect(replySubject(undefined)).to.equal('Re: (no subject)');
  });

  it('titles without Fw:, Fwd: or reply prefixes, at most 200 characters', () => {
    expect(titleOf('Fw: Numbers')).to.equal('Numbers');
    expect(titleOf('Fwd:Numbers')).to.equal('Numbers');
    expect(titleOf('Score: 3')).to.equal('Score: 3');
    expect(titleOf('Results: final')).to.equal('Results: final');
    expect(titleOf('Numbers  ')).to.equal('Numbers');
    expect(titleOf(' ')).to.equal('Email');
    expect(titleOf('x'.repeat(250))).to.equal('x'.repeat(200));
  });
});

describe('agent mail helpers: the quoted earlier message', () => {
  it('drops it from a message with CRLF line ends, and blank lines of spaces after it', () => {
    expect(stripQuotedReply('Thanks!\r\n\r\nOn Mon, Ann wrote:\r\n> old\r\n')).to.equal('Thanks!');
    expect(stripQuotedReply('Thanks!\n> old\n   \n')).to.equal('Thanks!');
  });

  it('drops the "wrote:" line only right before the quote, even with spaces after the colon', () => {
    expect(stripQuotedReply('Thanks!\nOn Mon, Ann wrote:  \n> old')).to.equal('Thanks!');
    expect(stripQuotedReply('Hi\nAnn wrote:')).to.equal('Hi\nAnn wrote:');
    expect(stripQuotedReply('Hi\nI wrote: see below\n> old')).to.equal('Hi\nI wrote: see below');
  });

  it('keeps a message that is all quote, trimmed', () => {
    expect(stripQuotedReply('> only a quote\n')).to.equal('> only a quote');
  });
});
