import { expect } from 'chai';
import { assertPatchedVersion, installedVersion, PATCHED_VERSION } from '@api/validator/internals';

// api/validator/ reaches into one release of express-openapi-validator; an upgrade must stop here (and the API at
// start) until every patch is checked against the new release.
describe('the validator patches are tied to one release', () => {
  it('the installed express-openapi-validator is the release they patch', () => {
    expect(installedVersion()).to.equal(PATCHED_VERSION);
    expect(() => assertPatchedVersion()).to.not.throw();
  });

  it('another release stops the API at start, naming both releases and the folder to check', () => {
    expect(() => assertPatchedVersion('5.7.0')).to.throw(
      /express-openapi-validator 5\.7\.0 is installed, but api\/validator\/ patches the internals of 5\.6\.2/,
    );
  });
});
