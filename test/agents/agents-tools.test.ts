import { expect } from 'chai';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { stored } from '@test/helpers/store';

const base = { description: 'd', instructions: 'i', model: 'gpt-4o-mini' };

describe('agent tools and agent attachments', () => {
  let env: TestEnv;
  let org: TestOrg;
  let agent: string;

  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Tools Org');
    agent = await newAgent('Main');
  });

  async function newAgent(name: string): Promise<string> {
    const res = await as(env, org.admin.token)
      .post(org.path('/agents'), { ...base, name })
      .expect(201);
    return res.body.id as string;
  }
  const tools = (id = agent) => org.path(`/agents/${id}/tools`);
  const links = (id = agent) => org.path(`/agents/${id}/agent-attachments`);

  it('serves the tool catalogue with a JSON schema per tool to any member', async () => {
    const res = await as(env, org.chat.token).get(org.path('/tools')).expect(200);
    const codes = res.body.map((t: { toolCode: string }) => t.toolCode);
    expect(codes).to.include.members([
      'tables_query',
      'tables_insert',
      'call_agent',
      'http_request',
      'current_time',
    ]);
    const http = res.body.find((t: { toolCode: string }) => t.toolCode === 'http_request');
    expect(http.name).to.be.a('string').and.not.empty;
    expect(http.description).to.contain('private');
    expect(http.configSchema).to.deep.include({ type: 'object', required: ['allowedHosts'] });
  });

  it('attaches, lists, reconfigures and detaches tools with validated configuration', async () => {
    const config = {
      allowedHosts: ['api.example.com', '*.example.org'],
      methods: ['GET', 'POST'],
      headers: { 'X-Api-Key': 'k' },
      timeoutMs: 5000,
    };
    const attached = await as(env, org.admin.token)
      .post(tools(), { toolCode: 'http_request', configuration: config })
      .expect(201);
    expect(attached.body).to.deep.include({
      organizationId: org.organizationId,
      agentId: agent,
      toolCode: 'http_request',
      configuration: { ...config, headers: { 'X-Api-Key': '********' } },
    });
    await as(env, org.admin.token).post(tools(), { toolCode: 'current_time' }).expect(201);
    await as(env, org.admin.token)
      .post(tools(), { toolCode: 'tables_query', configuration: { tableName: 'listings', maxRows: 50 } })
      .expect(201);

    const dup = await as(env, org.admin.token)
      .post(tools(), { toolCode: 'current_time', configuration: {} })
      .expect(409);
    expect(dup.body.error.code).to.equal('conflict');

    const list = await as(env, org.owner.token).get(tools()).expect(200);
    expect(list.body.map((t: { toolCode: string }) => t.toolCode)).to.deep.equal([
      'http_request',
      'current_time',
      'tables_query',
    ]);
    expect(list.body[1].configuration).to.deep.equal({});

    const put = await as(env, org.admin.token)
      .put(`${tools()}/current_time`, {
        toolCode: 'current_time',
        configuration: { timeZone: 'Australia/Sydney' },
      })
      .expect(200);
    expect(put.body.configuration).to.deep.equal({ timeZone: 'Australia/Sydney' });
    await as(env, org.admin.token)
      .put(`${tools()}/current_time`, { toolCode: 'http_request', configuration: {} })
      .expect(400);
    await as(env, org.admin.token)
      .put(`${tools()}/tables_insert`, { configuration: { tableName: 'x' } })
      .expect(404);
    // The tool named in the path is looked up before the body: one the agent does not have is 404, whatever
    // the body's toolCode or configuration.
    for (const body of [{ toolCode: 'teleport', configuration: {} }, { configuration: { nope: 1 } }])
      await as(env, org.admin.token).put(`${tools()}/teleport`, body).expect(404);

    const del = await as(env, org.admin.token).delete(`${tools()}/current_time`).expect(200);
    expect(del.body).to.deep.equal({
      organizationId: org.organizationId,
      agentId: agent,
      toolCode: 'current_time',
    });
    await as(env, org.admin.token).delete(`${tools()}/current_time`).expect(404);
    expect((await as(env, org.owner.token).get(tools()).expect(200)).body).to.have.length(2);
  });

  it('keeps secret configuration values write-only: masked in every answer, kept when sent back masked', async () => {
    const secret = 'Bearer s3cret-value-123';
    const config = { allowedHosts: ['api.example.com'], headers: { Authorization: secret, 'X-Trace': 'on' } };
    const attached = await as(env, org.admin.token)
      .post(tools(), { toolCode: 'http_request', configuration: config })
      .expect(201);
    const masked = { Authorization: '********', 'X-Trace': '********' };
    expect(attached.body.configuration.headers).to.deep.equal(masked);
    for (const token of [org.owner.token, org.admin.token]) {
      const list = await as(env, token).get(tools()).expect(200);
      expect(JSON.stringify(list.body)).to.not.contain('s3cret');
      expect(list.body[0].configuration.headers).to.deep.equal(masked);
    }
    // Sent back as read, with one secret replaced: the masked one keeps its stored value.
    const put = await as(env, org.admin.token)
      .put(`${tools()}/http_request`, {
        configuration: {
          ...attached.body.configuration,
          headers: { ...masked, 'X-Trace': 'off' },
          timeoutMs: 2000,
        },
      })
      .expect(200);
    expect(JSON.stringify(put.body)).to.not.contain('s3cret');
    const record = await stored(env, 'agent_tools')
      .findById(`${org.organizationId}:${agent}:http_request`)
      .lean<{ configurationJson: string }>();
    expect(JSON.parse(record!.configurationJson)).to.deep.equal({
      allowedHosts: ['api.example.com'],
      headers: { Authorization: secret, 'X-Trace': 'off' },
      timeoutMs: 2000,
    });
    const unknown = await as(env, org.admin.token)
      .put(`${tools()}/http_request`, {
        configuration: { allowedHosts: ['a.com'], headers: { 'X-New': '********' } },
      })
      .expect(400);
    expect(unknown.body.error.message).to.contain('configuration.headers.X-New');
    await as(env, org.admin.token).delete(`${tools()}/http_request`).expect(200);
    await as(env, org.admin.token)
      .post(tools(), {
        toolCode: 'http_request',
        configuration: { allowedHosts: ['a.com'], headers: masked },
      })
      .expect(400);
  });

  it('rejects unknown tools and configurations that break the schema with the reasons', async () => {
    const bad = async (body: object, ...texts: string[]) => {
      const res = await as(env, org.admin.token).post(tools(), body).expect(400);
      for (const t of texts) expect(res.body.error.message).to.contain(t);
    };
    // the catalogue's codes are an enum in openapi.yaml
    await bad(
      { toolCode: 'teleport', configuration: {} },
      'toolCode must be equal to one of the allowed values',
    );
    await bad({ toolCode: 'http_request', configuration: {} }, "must have required property 'allowedHosts'");
    await bad(
      { toolCode: 'http_request', configuration: { allowedHosts: [] } },
      'allowedHosts must NOT have fewer than 1 items',
    );
    await bad(
      {
        toolCode: 'http_request',
        configuration: { allowedHosts: ['http://x.com/path'], methods: ['BREW'], timeoutMs: 1 },
      },
      'allowedHosts.0 must be a host name',
      'methods.0 must be equal to one of the allowed values',
      'timeoutMs must be >= 100',
    );
    await bad(
      {
        toolCode: 'http_request',
        configuration: { allowedHosts: ['a.com'], headers: { 'bad header': 'x' } },
      },
      "name 'bad header'",
    );
    await bad({ toolCode: 'current_time', configuration: { timeZone: 'Mars/Olympus' } }, 'IANA time zone');
    await bad(
      { toolCode: 'tables_query', configuration: { tableName: 'x; drop', maxRows: 5000 } },
      'tableName must be a table name',
      'maxRows must be <= 1000',
    );
    await bad(
      { toolCode: 'tables_insert', configuration: { tableName: 't', extra: 1 } },
      "unknown property 'extra'",
    );
    await bad({ toolCode: 'call_agent', configuration: { any: 1 } }, "unknown property 'any'");
    await bad({ toolCode: 'call_agent', configuration: 'nope' }, 'configuration');
    expect((await as(env, org.admin.token).get(tools()).expect(200)).body).to.deep.equal([]);
  });

  it('attaches agents to agents with instructions', async () => {
    const helper = await newAgent('Helper');
    const created = await as(env, org.admin.token)
      .post(links(), { targetAgentId: helper, instructions: 'Ask for maths.' })
      .expect(201);
    expect(created.body).to.deep.include({
      organizationId: org.organizationId,
      agentId: agent,
      targetAgentId: helper,
      targetAgentName: 'Helper',
      instructions: 'Ask for maths.',
    });
    await as(env, org.admin.token)
      .post(links(), { targetAgentId: helper, instructions: 'again' })
      .expect(409);
    await as(env, org.admin.token).post(links(), { targetAgentId: agent, instructions: 'me' }).expect(400);
    // The agent in the path is looked up first: a missing one is 404 even when the body names it too.
    await as(env, org.admin.token)
      .post(links('agt_missing'), { targetAgentId: 'agt_missing', instructions: '' })
      .expect(404);
    await as(env, org.admin.token)
      .post(links(), { targetAgentId: 'agt_missing', instructions: '' })
      .expect(invalidReference('targetAgentId'));
    const withDefault = await as(env, org.admin.token)
      .post(links(), { targetAgentId: 'default-writer', instructions: 'Drafts.' })
      .expect(201);
    expect(withDefault.body.targetAgentName).to.equal('Writer');

    // No cycles, direct or through other agents.
    const cycle = await as(env, org.admin.token)
      .post(links(helper), { targetAgentId: agent, instructions: '' })
      .expect(400);
    expect(cycle.body.error.message).to.contain('cycle');
    const third = await newAgent('Third');
    await as(env, org.admin.token)
      .post(links(helper), { targetAgentId: third, instructions: '' })
      .expect(201);
    await as(env, org.admin.token).post(links(third), { targetAgentId: agent, instructions: '' }).expect(400);

    const put = await as(env, org.admin.token)
      .put(`${links()}/${helper}`, { instructions: 'Only for maths.' })
      .expect(200);
    expect(put.body.instructions).to.equal('Only for maths.');
    await as(env, org.admin.token).put(`${links()}/${third}`, { instructions: 'x' }).expect(404);
    const list = await as(env, org.owner.token).get(links()).expect(200);
    expect(list.body.map((l: { targetAgentId: string }) => l.targetAgentId)).to.deep.equal([
      helper,
      'default-writer',
    ]);

    const del = await as(env, org.admin.token).delete(`${links()}/default-writer`).expect(200);
    expect(del.body).to.deep.equal({
      organizationId: org.organizationId,
      agentId: agent,
      targetAgentId: 'default-writer',
    });
    await as(env, org.admin.token).delete(`${links()}/default-writer`).expect(404);
  });

  it('deletes tools and attachments in both directions with the agent', async () => {
    const helper = await newAgent('Helper');
    await as(env, org.admin.token).post(tools(helper), { toolCode: 'current_time' }).expect(201);
    await as(env, org.admin.token).post(links(), { targetAgentId: helper, instructions: '' }).expect(201);
    await as(env, org.admin.token)
      .post(links(helper), { targetAgentId: 'default-assistant', instructions: '' })
      .expect(201);

    await as(env, org.admin.token)
      .delete(org.path(`/agents/${helper}`))
      .expect(200);
    expect((await as(env, org.owner.token).get(links()).expect(200)).body).to.deep.equal([]);
    const scope = { organizationId: org.organizationId };
    expect(await stored(env, 'agent_tools').countDocuments({ ...scope, agentId: helper })).to.equal(0);
    expect(
      await stored(env, 'agent_links').countDocuments({
        ...scope,
        $or: [{ agentId: helper }, { targetAgentId: helper }],
      }),
    ).to.equal(0);
    // A recreated agent of the same name starts with nothing attached.
    const again = await newAgent('Helper');
    expect((await as(env, org.owner.token).get(tools(again)).expect(200)).body).to.deep.equal([]);
  });

  it('lets members with access read attachments and only admins change them', async () => {
    await as(env, org.admin.token).post(tools(), { toolCode: 'current_time' }).expect(201);
    await as(env, org.chat.token).get(tools()).expect(404);
    await as(env, org.chat.token).get(links()).expect(404);
    const g = (
      await as(env, org.admin.token)
        .post(org.path('/groups'), { name: 'G', description: '', fullAccess: true })
        .expect(201)
    ).body.userGroupId;
    await as(env, org.admin.token)
      .post(org.path(`/groups/${g}/users`), { userId: org.chat.userId })
      .expect(200);
    expect((await as(env, org.chat.token).get(tools()).expect(200)).body).to.have.length(1);
    await as(env, org.chat.token).get(links()).expect(200);
    await as(env, org.chat.token).post(tools(), { toolCode: 'call_agent' }).expect(403);
    await as(env, org.chat.token).delete(`${tools()}/current_time`).expect(403);
    await as(env, org.chat.token)
      .post(links(), { targetAgentId: 'default-assistant', instructions: '' })
      .expect(403);
  });

  it('keeps attachments inside the organization', async () => {
    const other = await createTestOrg(env, 'Other Tools Org');
    const theirs = (
      await as(env, other.admin.token)
        .post(other.path('/agents'), { ...base, name: 'Theirs' })
        .expect(201)
    ).body.id;
    await as(env, org.admin.token)
      .post(links(), { targetAgentId: theirs, instructions: '' })
      .expect(invalidReference('targetAgentId'));
    await as(env, other.admin.token)
      .post(other.path(`/agents/${agent}/tools`), { toolCode: 'current_time' })
      .expect(404);
    await as(env, other.admin.token)
      .get(other.path(`/agents/${agent}/tools`))
      .expect(404);
    await as(env, other.admin.token)
      .get(other.path(`/agents/${agent}/agent-attachments`))
      .expect(404);
    await as(env, other.admin.token).get(tools()).expect(401);
  });
});
