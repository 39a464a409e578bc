import { expect } from 'chai';
import { normalizeContentType } from '@lib/artifacts/artifact-content';

/*
 * An artifact's contentType becomes the Content-Type header its content is stored and served with: a parameter
 * holding a control or non-ASCII character is a 400 (it was a 500 from the object store's client).
 */
describe('artifact contentType', () => {
  it('refuses parameters with control or non-ASCII characters, and keeps printable ones', () => {
    for (const bad of [
      'text/plain; charset=utf\u00018',
      'text/html; a=\u007f',
      'text/plain; name=caf\u00e9',
    ]) {
      let status: number | undefined;
      try {
        normalizeContentType(bad);
      } catch (err) {
        status = (err as { status?: number }).status;
      }
      expect(status, JSON.stringify(bad)).to.equal(400);
    }
    expect(normalizeContentType('text/plain; charset=utf-8')).to.equal('text/plain; charset=utf-8');
  });
});
