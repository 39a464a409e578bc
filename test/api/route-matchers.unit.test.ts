import { expect } from 'chai';
import { cacheValidatorRouteMatchers } from '@api/validator/route-matchers';
import { validatorRequire } from '@api/validator/internals';

type Matcher = { regexp: RegExp; keys: Array<{ name: string }> };
const compile = () =>
  (validatorRequire('path-to-regexp') as { pathToRegexp: (p: string, o?: object) => Matcher }).pathToRegexp;

describe('route matchers of the request validator', () => {
  before(() => cacheValidatorRouteMatchers());

  it('compiles each route once per routing options and still matches and names parameters', () => {
    const route = '/orgs/:organizationId/agents/:agentId';
    const first = compile()(route, { sensitive: false, strict: false });
    expect(compile()(route, { sensitive: false, strict: false })).to.equal(first);
    expect(compile()(route, { sensitive: true, strict: false })).to.not.equal(first);
    expect(first.regexp.exec('/orgs/org_1/agents/agt_2')?.slice(1)).to.deep.equal(['org_1', 'agt_2']);
    expect(first.keys.map((k) => k.name)).to.deep.equal(['organizationId', 'agentId']);
    expect(first.regexp.exec('/orgs/org_1/agents')).to.equal(null);
  });

  it('is installed once however often the app is built', () => {
    const installed = compile();
    cacheValidatorRouteMatchers();
    expect(compile()).to.equal(installed);
  });
});
