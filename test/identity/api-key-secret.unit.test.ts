import { expect } from 'chai';
import { apiKeyIdOf, apiKeyMatches, generateApiKey, hashApiKey } from '@lib/auth/api-key-secret';

describe('API key secrets', () => {
  it('names its record, keeps a 12-character prefix and stores only the hash of the whole key', () => {
    const { apiKeyId, key, keyHash, keyPrefix } = generateApiKey();
    expect(key).to.match(/^awk_[0-9a-f]{24}[A-Za-z0-9_-]{43}$/);
    expect(apiKeyId).to.equal(`key_${key.slice(4, 28)}`);
    expect(keyPrefix).to.equal(key.slice(0, 12)).and.have.length(12);
    expect(keyHash)
      .to.equal(hashApiKey(key))
      .and.match(/^[0-9a-f]{64}$/);
    expect(generateApiKey().key).to.not.equal(key);
  });

  it('reads the record id only from a key shaped like ours', () => {
    const hex = 'a'.repeat(24);
    expect(apiKeyIdOf(`awk_${hex}secret`)).to.equal(`key_${hex}`);
    expect(apiKeyIdOf(`xyz_${hex}secret`)).to.equal(null);
    expect(apiKeyIdOf(`awk_${'g'.repeat(24)}secret`)).to.equal(null);
    expect(apiKeyIdOf(`awk_${'A'.repeat(24)}secret`)).to.equal(null);
    expect(apiKeyIdOf(`awk_${'a'.repeat(23)}`)).to.equal(null);
    expect(apiKeyIdOf(`awk_g${'a'.repeat(23)}secret`)).to.equal(null);
    expect(apiKeyIdOf(`awk_${'a'.repeat(23)}g`)).to.equal(null);
  });

  it('matches a key only against the hash of that exact key, and a malformed stored hash never matches', () => {
    const { key, keyHash } = generateApiKey();
    expect(apiKeyMatches(key, keyHash)).to.equal(true);
    expect(apiKeyMatches(`${key}x`, keyHash)).to.equal(false);
    expect(apiKeyMatches(generateApiKey().key, keyHash)).to.equal(false);
    expect(apiKeyMatches(key, keyHash.slice(0, 32))).to.equal(false);
    expect(apiKeyMatches(key, '')).to.equal(false);
  });
});
