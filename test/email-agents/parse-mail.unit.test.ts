import { expect } from 'chai';
import { automaticMailReason } from '@lib/email-agents/mime';
import { parseMail } from '@lib/email-agents/parse-mail';

const crlf = (...lines: string[]) => Buffer.from(lines.join('\r\n'));

describe('parsing an inbound mail: headers as written', () => {
  // RFC 2919 section 3 and RFC 2369 section 3.2: what a list server adds to each message it sends out.
  const listMail = crlf(
    'From: member@example.test',
    'To: desk@agents.example.test',
    'Subject: [team] weekly numbers',
    'List-Id: List Header Mailing List <list-header.nisto.com>',
    'List-Unsubscribe: <mailto:list-request@host.com?subject=unsubscribe>',
    '',
    'The numbers.',
  );

  it('reads List-Id and List-Unsubscribe, so list mail is never answered (RFC 3834 section 2)', async () => {
    const mail = await parseMail(listMail);
    expect(mail.header('List-Id')).to.equal('List Header Mailing List <list-header.nisto.com>');
    expect(mail.header('list-unsubscribe')).to.equal('<mailto:list-request@host.com?subject=unsubscribe>');
    expect(automaticMailReason('member@example.test', mail.header)).to.equal('mailing-list mail');
  });
});
