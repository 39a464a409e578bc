import { expect } from 'chai';
import { CAPABILITIES, isCapability, ROLE_CAPABILITIES } from '@lib/auth/roles';

describe('roles', () => {
  it('gives owners every capability, admins all but owner removal and billing', () => {
    expect([...ROLE_CAPABILITIES.owner]).to.have.members([...CAPABILITIES]);
    const adminLacks = CAPABILITIES.filter((c) => !ROLE_CAPABILITIES.admin.has(c));
    expect(adminLacks).to.have.members(['users.manage_owners', 'org.billing']);
  });

  it('lets chat users use, never manage', () => {
    expect([...ROLE_CAPABILITIES.chat]).to.have.members([
      'org.read',
      'users.read',
      'tables.read',
      'agents.use',
      'conversations.use',
      'knowledge_bases.use',
      'chains.use',
      'artifacts.use',
    ]);
  });

  it('recognises only the declared capability names', () => {
    expect(isCapability('agents.use')).to.equal(true);
    for (const value of ['agents.usex', 'agents', '', 42, null, undefined])
      expect(isCapability(value), String(value)).to.equal(false);
  });
});
