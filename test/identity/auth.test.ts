import { expect } from 'chai';
import { SignJWT } from 'jose';
import request from 'supertest';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { CAPABILITIES } from '@lib/auth/roles';
import { openApiSpecPath } from '@lib/spec';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { addMember, as, createTestOrg, type TestOrg } from '@test/helpers/org';

describe('authentication and tenancy', () => {
  let env: TestEnv;
  let a: TestOrg;
  let b: TestOrg;

  before(async () => {
    env = await testEnv();
    [a, b] = await Promise.all([createTestOrg(env, 'Org A'), createTestOrg(env, 'Org B')]);
  });

  it('refuses a request without credentials with 401 and the error body', async () => {
    const res = await request(env.app).get(a.path()).expect(401);
    expect(res.body.error.code).to.equal('unauthorized');
    expect(res.body.error.message).to.be.a('string');
  });

  it('refuses garbage, forged and expired tokens', async () => {
    await as(env, 'not-a-token').get(a.path()).expect(401);
    await as(env, 'awk_madeup').get(a.path()).expect(401);
    const now = Math.floor(Date.now() / 1000);
    const claims = { typ: 'session', org: a.organizationId };
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(env.config.auth.issuer)
      .setAudience('agent-workspace-api')
      .setSubject(a.owner.userId)
      .setExpirationTime(now + 600)
      .sign(new TextEncoder().encode('x'.repeat(40)));
    await as(env, forged).get(a.path()).expect(401);
    const expired = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(env.config.auth.issuer)
      .setAudience('agent-workspace-api')
      .setSubject(a.owner.userId)
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 60)
      .sign(new TextEncoder().encode(env.config.auth.jwtSecret));
    const res = await as(env, expired).get(a.path()).expect(401);
    expect(res.body.error.message).to.contain('expired');
  });

  it("never lets one organization's credentials reach another organization", async () => {
    for (const token of [a.owner.token, a.admin.token, a.chat.token, a.apiKey]) {
      const res = await as(env, token).get(b.path()).expect(401);
      expect(res.body).to.not.have.property('organizationId');
      await as(env, token).get(b.path('/users')).expect(401);
      await as(env, token)
        .get(b.path(`/users/${b.owner.userId}`))
        .expect(401);
    }
  });

  it('binds every credential to its organization, even for a person who belongs to both', async () => {
    // a's admin and chat member are also owners of b; their credentials for a must not open b.
    for (const email of [a.admin.email, a.chat.email]) {
      const account = (await env.deps.repos.accounts.findByEmail(email))!;
      await env.deps.repos.tenant(b.organizationId).members.add(account, 'owner');
    }
    const key = await as(env, a.admin.token)
      .post(a.path('/api-keys'), { description: 'both orgs', permissions: {} })
      .expect(201);
    const assumed = await as(env, a.owner.token)
      .post(a.path('/assume-role'), { userId: a.chat.userId, permissions: [] })
      .expect(200);
    const { token: sessionForB } = await env.deps.tokens.signSession(b.organizationId, a.chat.userId);
    await as(env, sessionForB).get(b.path('/users')).expect(200);
    const credentials: Array<[string, string]> = [
      ['session', a.chat.token],
      ['API key', key.body.key as string],
      ['assume-role token', assumed.body.token as string],
    ];
    for (const [what, credential] of credentials) {
      const res = await as(env, credential).get(b.path()).expect(401);
      expect(res.body.error.message, what).to.equal(
        what === 'API key'
          ? 'API key is not valid for this organization'
          : 'token is not valid for this organization',
      );
      await as(env, credential).get(a.path()).expect(200);
    }
  });

  it('says which part of a credential is wrong', async () => {
    const message = async (authorization: string | undefined) => {
      const req = request(env.app).get(a.path());
      const res = await (authorization === undefined ? req : req.set('Authorization', authorization)).expect(
        401,
      );
      return res.body.error.message as string;
    };
    const required = 'Authorization: Bearer <token> is required';
    expect(await message(undefined)).to.equal('Authorization header required');
    expect(await message('Basic abc')).to.equal("Authorization header with scheme 'Bearer' required");
    expect(await message(`Bearer ${a.owner.token} extra`)).to.equal(required);
    expect(await message(`xBearer ${a.owner.token}`)).to.equal(required);
    await as(env, `${a.owner.token}  `).get(a.path()).expect(200);
    await request(env.app).get(a.path()).set('Authorization', `bearer   ${a.owner.token}`).expect(200);
    expect(await message(`Bearer ${a.apiKey}x`)).to.equal('invalid API key');
    expect(await message('Bearer not-a-token')).to.equal('token signature or claims are invalid');
    const outsider = await addMember(env, b.organizationId, 'chat');
    const { token } = await env.deps.tokens.signSession(a.organizationId, outsider.userId);
    expect(await message(`Bearer ${token}`)).to.equal(
      'the token subject is not a member of this organization',
    );
  });

  it('treats a user of org A asking for a member of org B through A as not found', async () => {
    const res = await as(env, a.owner.token)
      .get(a.path(`/users/${b.owner.userId}`))
      .expect(404);
    expect(res.body.error.code).to.equal('not_found');
  });

  it('lets an API key act on behalf of its creator, within its organization', async () => {
    const res = await as(env, a.apiKey).get(a.path('/users')).expect(200);
    expect(res.body.items.map((m: { userId: string }) => m.userId)).to.include(a.owner.userId);
  });

  it('refuses the request once the member behind a session or key is removed', async () => {
    const org = await createTestOrg(env, 'Leaving Org');
    await as(env, org.owner.token)
      .delete(org.path(`/users/${org.admin.userId}`))
      .expect(200);
    await as(env, org.admin.token).get(org.path()).expect(401);
  });

  it('answers a capability the role lacks with 403', async () => {
    const res = await as(env, a.chat.token).get(a.path('/users')).expect(403);
    expect(res.body.error.code).to.equal('forbidden');
    expect(res.body.error.message).to.contain('users.list');
  });

  it('checks credentials before the body, so a bad body without credentials is 401', async () => {
    await request(env.app).post(a.path('/users')).send({ nonsense: true }).expect(401);
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const res = await request(env.app)
      .put(a.path())
      .set('Authorization', `Bearer ${a.owner.token}`)
      .set('Content-Type', 'application/json')
      .send('{"name":')
      .expect(400);
    expect(res.body.error.code).to.equal('invalid_json');
  });

  it('lists literal paths before the parameter paths that would shadow them (the validator takes the first match)', () => {
    const paths = Object.keys((parse(readFileSync(openApiSpecPath(), 'utf8')) as { paths: object }).paths);
    const pattern = (p: string) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const shadowed: string[] = [];
    paths.forEach((earlier, i) => {
      for (const later of paths.slice(i + 1)) {
        if (pattern(earlier).test(later.replace(/\{[^}]+\}/g, 'x')))
          shadowed.push(`${earlier} hides ${later}`);
      }
    });
    expect(shadowed).to.deep.equal([]);
  });

  it('declares a valid capability, explicit public access or the operator token on every operation of the contract', () => {
    const spec = parse(readFileSync(openApiSpecPath(), 'utf8')) as {
      paths: Record<string, Record<string, { security?: unknown[]; 'x-capability'?: string }>>;
    };
    const methods = ['get', 'post', 'put', 'delete', 'patch'];
    const undeclared: string[] = [];
    for (const [path, item] of Object.entries(spec.paths)) {
      for (const method of methods) {
        const op = item[method];
        if (!op) continue;
        const isPublic = Array.isArray(op.security) && op.security.length === 0;
        // Operator endpoints (GET /metrics) take only METRICS_TOKEN: no organization, so no capability.
        const isOperator =
          JSON.stringify(op.security) === JSON.stringify([{ metricsToken: [] }]) && !op['x-capability'];
        if (isOperator) continue;
        if (!isPublic && !(CAPABILITIES as readonly string[]).includes(op['x-capability'] ?? '')) {
          undeclared.push(`${method.toUpperCase()} ${path}`);
        }
        if (path.startsWith('/orgs/{organizationId}') === false && !isPublic)
          undeclared.push(`${path} outside /orgs`);
      }
    }
    expect(undeclared).to.deep.equal([]);
  });
});
