import { expect } from 'chai';
import {
  attachmentAllowed,
  automaticMailReason,
  messageIdList,
  messageKeyOf,
  normaliseMessageId,
  rawHeader,
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
