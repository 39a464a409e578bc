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

describe('parsing an inbound mail: senders, ids and text', () => {
  it('reads the RFC 5322 reply example (appendix A.2): sender, subject, text and thread ids', async () => {
    const mail = await parseMail(
      crlf(
        'From: Mary Smith <Mary@Example.net>',
        'To: John Doe <jdoe@machine.example>',
        'Reply-To: "Mary Smith: Personal Account" <smith@home.example>',
        'Subject: Re: Saying Hello',
        'Date: Fri, 21 Nov 1997 10:01:10 -0600',
        'Message-ID: <3456@example.net>',
        'In-Reply-To: <1234@local.machine.example>',
        'References: <1234@local.machine.example>',
        '',
        'This is a reply to your hello.',
        '',
      ),
    );
    expect(mail.fromAddress).to.equal('mary@example.net');
    expect(mail.fromCount).to.equal(1);
    expect(mail.messageId).to.equal('3456@example.net');
    expect(mail.inReplyTo).to.equal('<1234@local.machine.example>');
    expect(mail.references).to.deep.equal(['1234@local.machine.example']);
    expect(mail.subject).to.equal('Re: Saying Hello');
    expect(mail.text).to.equal('This is a reply to your hello.');
    expect(mail.header('date')).to.equal('Fri, 21 Nov 1997 10:01:10 -0600');
    expect(mail.header('x-not-there')).to.equal(null);
  });

  it('counts only the From entries that are addresses (RFC 5322 section 3.6.2 allows several)', async () => {
    const from = async (value: string) => {
      const mail = await parseMail(crlf(`From: ${value}`, 'Subject: s', '', 'x'));
      return [mail.fromAddress, mail.fromCount];
    };
    expect(await from('Ann <ann@example.test>, Bob <bob@example.test>')).to.deep.equal([
      'ann@example.test',
      2,
    ]);
    expect(await from('Ann <ann@example.test>, Bob')).to.deep.equal(['ann@example.test', 1]);
  });

  it('reads a mail without From, Subject or text part as having none', async () => {
    const mail = await parseMail(
      crlf('Content-Type: application/pdf', 'Content-Transfer-Encoding: base64', '', 'JVBERi0='),
    );
    expect(mail.fromAddress).to.equal(null);
    expect(mail.fromCount).to.equal(0);
    expect(mail.subject).to.equal('');
    expect(mail.text).to.equal('');
  });
});

describe('parsing an inbound mail: repeated and folded headers', () => {
  it('reads the text of an HTML part inside a multipart that has no plain-text part (RFC 2387 multipart/related)', async () => {
    const mail = await parseMail(
      crlf(
        'From: member@example.test',
        'To: desk@agents.example.test',
        'Subject: Report',
        'MIME-Version: 1.0',
        'Content-Type: multipart/related; boundary="b1"; type="text/html"',
        '',
        '--b1',
        'Content-Type: text/html; charset=utf-8',
        '',
        '<html><body><p>Please summarise <b>the attached</b> report.</p><img src="cid:logo"></body></html>',
        '--b1',
        'Content-Type: image/png',
        'Content-ID: <logo>',
        'Content-Transfer-Encoding: base64',
        '',
        'iVBORw0KGgo=',
        '--b1--',
        '',
      ),
    );
    expect(mail.text).to.equal('Please summarise the attached report.');
  });

  it('gives every instance of a header in order, unfolded, with CRLF or LF line ends', async () => {
    const lines = [
      'From: member@example.test',
      'Authentication-Results: mx.relay.test;',
      ' dmarc=pass header.from=example.test',
      'Received: from a.example.test',
      'Authentication-Results: mx.attacker.test;',
      '\tdmarc=pass header.from=example.test',
      'Subject: s',
      '',
      'x',
    ];
    const expected = [
      'mx.relay.test; dmarc=pass header.from=example.test',
      'mx.attacker.test; dmarc=pass header.from=example.test',
    ];
    for (const raw of [crlf(...lines), Buffer.from(lines.join('\n'))])
      expect((await parseMail(raw)).headerValues('Authentication-Results')).to.deep.equal(expected);
  });
});

describe('parsing an inbound mail: attachments', () => {
  const mixed = crlf(
    'From: member@example.test',
    'Subject: files',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: multipart/related; boundary="b2"',
    '',
    '--b2',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'See the logo and the files.',
    '--b2',
    'Content-Type: image/png',
    'Content-Disposition: inline',
    'Content-ID: <logo@example.test>',
    'Content-Transfer-Encoding: base64',
    '',
    'iVBORw0KGgo=',
    '--b2',
    'Content-Type: image/png',
    'Content-Disposition: inline; filename="chart.png"',
    'Content-Transfer-Encoding: base64',
    '',
    'iVBORw0KGgo=',
    '--b2--',
    '--b1',
    'Content-Type: application/pdf',
    'Content-Disposition: attachment; filename="../evil\\\\x/report.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    'JVBERi0=',
    '--b1',
    'Content-Disposition: attachment',
    '',
    'plain bytes',
    '--b1',
    'Content-Type: ',
    'Content-Disposition: attachment; filename="notes.bin"',
    '',
    'x',
    '--b1',
    'Content-Type: text/csv',
    `Content-Disposition: attachment; filename="${'n'.repeat(250)}.csv"`,
    '',
    'a,b',
    '--b1--',
    '',
  );

  it('keeps named inline parts and every attachment, names the unnamed by position, and no path survives', async () => {
    const mail = await parseMail(mixed);
    expect(mail.text).to.equal('See the logo and the files.');
    expect(mail.attachments.map((a) => [a.fileName, a.contentType])).to.deep.equal([
      ['chart.png', 'image/png'],
      ['.._evil_x_report.pdf', 'application/pdf'],
      ['attachment-3', 'application/octet-stream'],
      ['notes.bin', 'application/octet-stream'],
      [`${'n'.repeat(196)}.csv`, 'text/csv'],
    ]);
    expect(mail.attachments[1]!.content.toString('latin1')).to.equal('%PDF-');
  });
});
