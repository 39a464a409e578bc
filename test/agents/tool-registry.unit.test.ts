import { expect } from 'chai';
import {
  findTool,
  modelToolOf,
  resolveToolConfiguration,
  toolCatalogue,
  TOOLS,
  validateToolConfiguration,
} from '@lib/tools/registry';
import { SECRET_PROPERTIES, secretPropertiesOf } from '@lib/tools/secret-properties';
import type { ToolRunDeps } from '@lib/tools/tool-spec';

/** The 400 a configuration gets, as its message and details. */
function refusal(toolCode: string, configuration: unknown) {
  try {
    validateToolConfiguration(toolCode, configuration);
  } catch (err) {
    const e = err as { status: number; code: string; message: string; details?: Array<{ message: string }> };
    expect(e.status).to.equal(400);
    return { message: e.message, details: (e.details ?? []).map((d) => d.message) };
  }
  return expect.fail(`${toolCode} accepted ${JSON.stringify(configuration)}`);
}

describe('the tool registry', () => {
  it('lists every tool once in the catalogue, with its configuration schema', () => {
    const codes = toolCatalogue().map((t) => t.toolCode);
    expect(codes).to.deep.equal([
      'tables_query',
      'tables_insert',
      'call_agent',
      'http_request',
      'current_time',
      'create_artifact',
      'update_artifact',
      'task_plan',
      'browse',
    ]);
    for (const entry of toolCatalogue()) {
      expect(entry).to.have.all.keys('toolCode', 'name', 'description', 'configSchema');
      expect(entry.configSchema).to.equal(findTool(entry.toolCode)!.configSchema);
    }
    expect(findTool('nope')).to.equal(undefined);
  });

  it('shows the model its server tools by code, and no call_agent tool (it adds ask_<agent> instead)', () => {
    expect(modelToolOf('call_agent')).to.equal(null);
    expect(modelToolOf('nope')).to.equal(null);
    const tool = modelToolOf('current_time')!;
    expect(tool).to.deep.equal({
      name: 'current_time',
      description: findTool('current_time')!.model!.description,
      parameters: findTool('current_time')!.model!.parameters,
      executor: 'server',
    });
  });

  it('names the known tools when a toolCode is unknown', () => {
    const { message } = refusal('teleport', {});
    expect(message).to.equal(
      "unknown toolCode 'teleport'; GET /orgs/{organizationId}/tools lists them " +
        `(${TOOLS.map((t) => t.toolCode).join(', ')})`,
    );
  });

  it('reports every problem of a configuration, each in words a person can act on', () => {
    const { message, details } = refusal('http_request', {
      allowedHosts: ['api.example.com', 'not a host'],
      methods: ['GET', 'BREW'],
      headers: { 'Bad Header': 'x' },
      timeoutMs: 5,
      extra: true,
    });
    expect(details).to.have.members([
      "configuration has an unknown property 'extra'",
      'configuration.allowedHosts.1 must be a host name such as api.example.com or *.example.com',
      'configuration.methods.1 must be equal to one of the allowed values',
      "configuration.headers: name 'Bad Header' must be a header name (letters, digits and -)",
      'configuration.timeoutMs must be >= 100',
    ]);
    expect(message).to.equal(`invalid configuration for http_request: ${details.join('; ')}`);
    expect(refusal('current_time', { timeZone: 'Mars/Olympus' }).details).to.deep.equal([
      'configuration.timeZone must be an IANA time zone such as Australia/Sydney',
    ]);
    expect(refusal('tables_query', {}).details).to.deep.equal([
      "configuration must have required property 'tableName'",
    ]);
    expect(refusal('tables_query', { tableName: 'no spaces' }).details).to.deep.equal([
      'configuration.tableName must be a table name (letters, digits and underscores, at most 63)',
    ]);
  });

  it('accepts a valid configuration as given, and completes it with defaults only when resolved for a run', () => {
    const stored = { allowedHosts: ['*.example.com'] };
    validateToolConfiguration('http_request', stored);
    expect(stored).to.deep.equal({ allowedHosts: ['*.example.com'] });
    expect(resolveToolConfiguration('http_request', stored)).to.deep.equal({
      allowedHosts: ['*.example.com'],
      methods: ['GET'],
      timeoutMs: 10000,
    });
    expect(stored).to.deep.equal({ allowedHosts: ['*.example.com'] });
    expect(resolveToolConfiguration('current_time', { timeZone: 'Australia/Sydney' })).to.deep.equal({
      timeZone: 'Australia/Sydney',
    });
    expect(resolveToolConfiguration('current_time', { timeZone: 'Mars/Olympus' })).to.equal(null);
    expect(resolveToolConfiguration('teleport', {})).to.equal(null);
  });

  it('reads each tool’s secret properties from one list, the same for its spec and for redaction', () => {
    for (const tool of TOOLS)
      expect(secretPropertiesOf(tool.toolCode), tool.toolCode).to.deep.equal(tool.secretProperties ?? []);
    for (const toolCode of Object.keys(SECRET_PROPERTIES)) expect(findTool(toolCode), toolCode).to.exist;
    expect(secretPropertiesOf('constructor')).to.deep.equal([]);
  });
});

describe('the artifact tools', () => {
  const calls: Array<[string, unknown, unknown]> = [];
  const deps = {
    artifacts: {
      create: (call: unknown, args: unknown) => {
        calls.push(['create', call, args]);
        return Promise.resolve({ artifactId: 'art_1' });
      },
      update: (call: unknown, args: unknown) => {
        calls.push(['update', call, args]);
        return Promise.resolve({ artifactId: 'art_1' });
      },
    },
  } as unknown as ToolRunDeps;
  const ctx = (conversation?: { conversationId: string; userId: string }) => ({
    organizationId: 'org_1',
    agentId: 'agt_1',
    config: {},
    requestId: 'req_1',
    toolCallId: 'call_1',
    conversation,
  });
  const turn = { conversationId: 'cnv_1', userId: 'usr_1' };
  const call = {
    ...turn,
    organizationId: 'org_1',
    agentId: 'agt_1',
    requestId: 'req_1',
    toolCallId: 'call_1',
  };

  it('write into the turn’s conversation, for its creator, with the call’s ids', async () => {
    calls.length = 0;
    const create = findTool('create_artifact')!;
    const update = findTool('update_artifact')!;
    await create.run!(ctx(turn), { name: 'Plan', contentType: 'text/markdown', content: '# p' }, deps);
    await update.run!(ctx(turn), { artifactId: 'art_1', content: '# q' }, deps);
    await update.run!(
      ctx(turn),
      { artifactId: 'art_1', content: '# r', contentType: 'text/plain', name: 'P' },
      deps,
    );
    expect(calls).to.deep.equal([
      ['create', call, { name: 'Plan', contentType: 'text/markdown', content: '# p' }],
      ['update', call, { artifactId: 'art_1', content: '# q', contentType: undefined, name: undefined }],
      ['update', call, { artifactId: 'art_1', content: '# r', contentType: 'text/plain', name: 'P' }],
    ]);
    expect(modelToolOf('create_artifact')!.description).to.contain('service.manifest.ts');
    expect(findTool('create_artifact')!.model!.parameters).to.deep.include({
      required: ['name', 'contentType', 'content'],
    });
    expect(findTool('update_artifact')!.model!.parameters).to.deep.include({
      required: ['artifactId', 'content'],
    });
  });

  it('refuse outside a conversation and arguments that are not strings, writing nothing', async () => {
    calls.length = 0;
    const refused = async (
      code: string,
      c: ReturnType<typeof ctx>,
      args: Record<string, unknown>,
      text: string,
    ) => {
      const err = await findTool(code)!.run!(c, args, deps).then(
        () => expect.fail(`${code} ran with ${JSON.stringify(args)}`),
        (e: { status?: number; message: string }) => e,
      );
      expect(err.status).to.equal(400);
      expect(err.message).to.contain(text);
    };
    const good = { name: 'n', contentType: 'text/plain', content: 'c' };
    await refused('create_artifact', ctx(), good, 'only be written in a conversation');
    await refused(
      'update_artifact',
      ctx(),
      { artifactId: 'a', content: 'c' },
      'only be written in a conversation',
    );
    await refused('create_artifact', ctx(turn), { ...good, content: 42 }, 'content must be a string');
    await refused(
      'create_artifact',
      ctx(turn),
      { contentType: 'text/plain', content: 'c' },
      'name must be a string',
    );
    await refused(
      'update_artifact',
      ctx(turn),
      { artifactId: 'a', content: 'c', name: 7 },
      'name must be a string',
    );
    expect(calls).to.deep.equal([]);
    expect(resolveToolConfiguration('create_artifact', {})).to.deep.equal({});
    expect(refusal('update_artifact', { anything: 1 }).message).to.contain("unknown property 'anything'");
  });
});
