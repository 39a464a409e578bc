import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  checkName,
  decodeContent,
  fileNameFor,
  isHtml,
  mediaType,
  normalizeContentType,
  versionKey,
} from '@lib/artifacts/artifact-content';

/*
 * A version's content (docs/artifacts-and-apps.md and the spec's limits): exactly one of content (UTF-8 text)
 * and contentBase64 (standard alphabet, padded), at most the configured bytes; names are 1 to 500 characters
 * after trimming; downloads are named after the artifact with the extension its type implies.
 */
const fails = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    const e = err as { status?: number; code?: string; message: string };
    return { status: e.status, code: e.code, message: e.message };
  }
  throw new Error('expected a refusal');
};
const invalid = (message: string) => ({ status: 400, code: 'validation_failed', message });

describe('artifact content', () => {
  it('decodes text as UTF-8 and base64 as bytes, with size and SHA-256', () => {
    const text = decodeContent({ contentType: 'Text/Plain', content: 'héllo' }, 100);
    expect(text).to.deep.include({ contentType: 'text/plain', sizeBytes: 6 });
    expect(text.bytes.toString('utf8')).to.equal('héllo');
    expect(text.sha256).to.equal(createHash('sha256').update('héllo').digest('hex'));
    const bin = decodeContent({ contentType: 'application/octet-stream', contentBase64: 'AAH/' }, 100);
    expect([...bin.bytes]).to.deep.equal([0, 1, 255]);
    expect(decodeContent({ contentType: 'text/plain', contentBase64: 'YQ==' }, 1).bytes.toString()).to.equal(
      'a',
    );
    expect(decodeContent({ contentType: 'text/plain', contentBase64: '' }, 1).sizeBytes).to.equal(0);
    expect(decodeContent({ contentType: 'text/plain', content: '' }, 0).sizeBytes).to.equal(0);
  });

  it('wants exactly one of content and contentBase64', () => {
    const message = 'give the content as exactly one of content (text) and contentBase64';
    expect(fails(() => decodeContent({ contentType: 'text/plain' }, 10))).to.deep.equal(invalid(message));
    expect(
      fails(() => decodeContent({ contentType: 'text/plain', content: 'a', contentBase64: 'YQ==' }, 10)),
    ).to.deep.equal(invalid(message));
  });

  it('takes only well-formed, padded base64', () => {
    const message = 'contentBase64 is not valid base64 (standard alphabet, padded)';
    for (const bad of ['YQ', 'YQ=', 'Y===', 'YQ-_', 'YQ==\n', ' YQ=', 'YQ==YQ=='])
      expect(
        fails(() => decodeContent({ contentType: 'text/plain', contentBase64: bad }, 10)),
        bad,
      ).to.deep.equal(invalid(message));
  });

  it('refuses one byte over the limit with a 413 naming both sizes', () => {
    expect(decodeContent({ contentType: 'text/plain', content: 'abcd' }, 4).sizeBytes).to.equal(4);
    expect(
      fails(() => decodeContent({ contentType: 'text/plain', contentBase64: 'YWJjZGU=' }, 4)),
    ).to.deep.equal({
      status: 413,
      code: 'payload_too_large',
      message: 'an artifact version may have at most 4 bytes; this one has 5',
    });
  });

  it('lower-cases the media type, keeps parameters, and refuses what is not a MIME type', () => {
    expect(normalizeContentType('TEXT/html;;  charset=UTF-8 ; q=1')).to.equal(
      'text/html; charset=UTF-8; q=1',
    );
    expect(normalizeContentType('application/vnd.api+json')).to.equal('application/vnd.api+json');
    for (const bad of ['text', 'text/', '/html', 'text/ht ml', '-x/y', 'text/html/x', ''])
      expect(
        fails(() => normalizeContentType(bad)),
        bad,
      ).to.deep.equal(invalid(`contentType '${bad}' is not a MIME type such as text/html`));
    for (const bad of ['text/plain; a=\u00e9', 'text/plain; a=b\u0007c', 'text/plain; a=\u007f'])
      expect(
        fails(() => normalizeContentType(bad)),
        bad,
      ).to.deep.equal(invalid('contentType parameters may hold only printable ASCII characters'));
    expect(normalizeContentType('text/plain; a=~ !')).to.equal('text/plain; a=~ !');
  });

  it('tells HTML by its media type alone', () => {
    expect(mediaType(' Text/HTML ; charset=utf-8')).to.equal('text/html');
    expect(isHtml('text/html; charset=utf-8')).to.equal(true);
    expect(isHtml('application/xhtml+xml')).to.equal(false);
    expect(isHtml('text/htmlx')).to.equal(false);
  });

  it('takes names of 1 to 500 characters after trimming', () => {
    expect(checkName('  a  ')).to.equal('a');
    expect(checkName(` ${'n'.repeat(500)} `)).to.have.length(500);
    expect(fails(() => checkName(' \t '))).to.deep.equal(
      invalid('name must be 1 to 500 characters after trimming; got 0'),
    );
    expect(fails(() => checkName('n'.repeat(501)))).to.deep.equal(
      invalid('name must be 1 to 500 characters after trimming; got 501'),
    );
  });

  it('names files safely with the extension of their type', () => {
    expect(fileNameFor('Q3 report (final)!', 'text/html')).to.equal('Q3_report_final_.html');
    expect(fileNameFor('...hidden', 'text/plain')).to.equal('hidden.txt');
    expect(fileNameFor('_x', 'text/plain')).to.equal('x.txt');
    expect(fileNameFor('a.b-c_d', 'application/x-unknown-thing')).to.equal('a.b-c_d');
    expect(fileNameFor('REPORT.HTML', 'text/html')).to.equal('REPORT.HTML');
    expect(fileNameFor('report.htm', 'text/html')).to.equal('report.htm.html');
    expect(fileNameFor('reporthtml', 'text/html')).to.equal('reporthtml.html');
    expect(fileNameFor('é', 'text/plain')).to.equal('artifact.txt');
    expect(fileNameFor('x'.repeat(130), 'text/plain')).to.equal(`${'x'.repeat(120)}.txt`);
  });

  it('keeps each version under its organization, artifact and version', () => {
    expect(versionKey('org_1', 'art_2', 'ver_3')).to.equal('artifacts/org_1/art_2/ver_3');
  });
});
