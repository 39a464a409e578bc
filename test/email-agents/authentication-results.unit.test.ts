import { expect } from 'chai';
import { parseAuthenticationResults, trustedDmarcPass } from '@lib/email-agents/authentication-results';

// The header syntax of RFC 8601 (section 2.2) over RFC 5322's lexical rules: comments nest and may hold a
// quoted-pair, quoted strings may hold a quoted-pair and parentheses, CFWS may surround `=`, `/` and `.`.

/** The properties of the one resinfo of `example.com; dkim=pass <props>`. */
const propsOf = (props: string) =>
  parseAuthenticationResults(`example.com; dkim=pass ${props}`)?.results[0]?.props;

describe('Authentication-Results: the RFC 8601 examples', () => {
  it('reads "nothing was checked" (appendix B.2): an authserv-id with a version, no results', () => {
    expect(parseAuthenticationResults('example.org 1; none')).to.deep.equal({
      authservId: 'example.org',
      results: [],
    });
    // As the value follows the colon: after a space, or on a folded line.
    expect(parseAuthenticationResults(' example.org 1; none')?.authservId).to.equal('example.org');
    expect(parseAuthenticationResults('\r\n\texample.org 1; none')?.authservId).to.equal('example.org');
  });

  it('reads SMTP AUTH and SPF results on lines folded with LF alone (appendix B.4)', () => {
    expect(
      parseAuthenticationResults(
        'example.com;\n          auth=pass (cram-md5) smtp.auth=sender@example.net;\n          spf=pass smtp.mailfrom=example.net',
      ),
    ).to.deep.equal({
      authservId: 'example.com',
      results: [
        { method: 'auth', result: 'pass', props: { 'smtp.auth': 'sender@example.net' } },
        { method: 'spf', result: 'pass', props: { 'smtp.mailfrom': 'example.net' } },
      ],
    });
  });

  it('reads two DKIM signatures, one good and one bad (appendix B.7)', () => {
    expect(
      parseAuthenticationResults(
        'mail-router.example.net;\r\n' +
          '          dkim=pass (good signature) header.d=newyork.example.com\r\n' +
          '                header.b=oINEO8hg;\r\n' +
          '          dkim=fail (bad signature) header.d=newyork.example.com\r\n' +
          '                header.b=EToRSuvU',
      )?.results,
    ).to.deep.equal([
      {
        method: 'dkim',
        result: 'pass',
        props: { 'header.d': 'newyork.example.com', 'header.b': 'oineo8hg' },
      },
      {
        method: 'dkim',
        result: 'fail',
        props: { 'header.d': 'newyork.example.com', 'header.b': 'etorsuvu' },
      },
    ]);
  });

  it('lets no other method speak for DMARC: a Sender ID pass for the From domain is not a DMARC pass (appendix B.5)', () => {
    const senderId = 'example.com; sender-id=pass header.from=example.com';
    expect(trustedDmarcPass([senderId], ['example.com'], 'example.com')).to.deep.equal({
      pass: false,
      reason: 'no dmarc=pass for the From domain from a trusted relay (INBOUND_TRUSTED_RELAYS)',
    });
  });
});

describe('Authentication-Results: method and result', () => {
  it('takes a method with a version (method/version=result), and nothing before or after the result', () => {
    const header = parseAuthenticationResults(
      'example.com; dkim/1=pass header.d=example.com; dmarc/12=fail header.from=example.com; ' +
        'x.dmarc=pass header.from=example.com; dmarc=pass.x header.from=example.com; dmarc/v=pass',
    );
    expect(header?.results).to.deep.equal([
      { method: 'dkim', result: 'pass', props: { 'header.d': 'example.com' } },
      { method: 'dmarc', result: 'fail', props: { 'header.from': 'example.com' } },
    ]);
  });

  it('closes up white space around = . and /, however much there is', () => {
    const header = parseAuthenticationResults(
      'example.com; dmarc  =  pass header.from= example.com header . d =example.com',
    );
    expect(header?.results).to.deep.equal([
      { method: 'dmarc', result: 'pass', props: { 'header.from': 'example.com', 'header.d': 'example.com' } },
    ]);
  });

  it('separates resinfos and properties by a fold or a bare line break alone', () => {
    expect(
      parseAuthenticationResults('example.com;\ndmarc=pass\r\n header.from=example.com')?.results,
    ).to.deep.equal([{ method: 'dmarc', result: 'pass', props: { 'header.from': 'example.com' } }]);
  });

  it('skips a word that is no property', () => {
    expect(propsOf('policy header.d=example.com')).to.deep.equal({ 'header.d': 'example.com' });
  });
});

describe('Authentication-Results: comments and quoted strings (RFC 5322 section 3.2)', () => {
  it('drops a comment, even one holding an escaped parenthesis, and what looks like a property inside it', () => {
    expect(propsOf('header.s=sel header.d=example.com(key \\) header.d=evil.test)')).to.deep.equal({
      'header.s': 'sel',
      'header.d': 'example.com',
    });
  });

  it('separates the words on either side of a comment', () => {
    expect(propsOf('header.d=example.com(comment)header.s=sel')).to.deep.equal({
      'header.d': 'example.com',
      'header.s': 'sel',
    });
  });

  it('takes a closing parenthesis outside any comment as text', () => {
    expect(propsOf('header.s=sel) header.d=example.com')).to.deep.equal({
      'header.s': 'sel)',
      'header.d': 'example.com',
    });
  });

  it('takes a backslash outside quotes and comments as text: the parenthesis after it opens a comment', () => {
    expect(propsOf('header.s=sel\\(x) header.d=example.com')).to.deep.equal({
      'header.s': 'sel\\',
      'header.d': 'example.com',
    });
  });

  it('keeps parentheses, semicolons and escaped quotes inside a quoted string', () => {
    expect(propsOf('header.s="a (b) c"')).to.deep.equal({ 'header.s': 'a (b) c' });
    expect(propsOf('header.s="x\\"(y);z" header.d=example.com')).to.deep.equal({
      'header.s': 'x"(y);z',
      'header.d': 'example.com',
    });
  });

  it('drops a comment after a quoted string', () => {
    expect(propsOf('header.d=example.com header.s="sel" ( header.d=evil.test )')).to.deep.equal({
      'header.d': 'example.com',
      'header.s': 'sel',
    });
  });

  it('unquotes only a whole quoted string', () => {
    expect(propsOf('header.s=""')).to.deep.equal({ 'header.s': '' });
    expect(propsOf('header.s="')).to.deep.equal({ 'header.s': '"' });
    expect(propsOf('header.s="sel')).to.deep.equal({ 'header.s': '"sel' });
    expect(propsOf('header.s=sel"')).to.deep.equal({ 'header.s': 'sel"' });
    expect(propsOf('header.s="sel\\')).to.deep.equal({ 'header.s': '"sel\\' });
  });

  it('reads a quoted authserv-id folded with LF alone as one space', () => {
    expect(parseAuthenticationResults('"mx.relay.test\n x"; none')?.authservId).to.equal('mx.relay.test x');
  });
});

describe('Authentication-Results: size', () => {
  it('reads a header of 8192 characters, and ignores a longer one', () => {
    const pass = 'mx.relay.test; dmarc=pass header.from=example.test (';
    const header = `${pass}${'x'.repeat(8192 - pass.length - 1)})`;
    expect(header).to.have.length(8192);
    expect(trustedDmarcPass([header], ['mx.relay.test'], 'example.test')).to.deep.equal({ pass: true });
    expect(parseAuthenticationResults(`${header} `)).to.equal(null);
  });
});
