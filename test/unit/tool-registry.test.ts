import { expect } from 'chai';
import {
  findTool,
  modelToolOf,
  resolveToolConfiguration,
  toolCatalogue,
  TOOLS,
  validateToolConfiguration,
} from '@lib/tools/registry';

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
      'task_plan',
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
});
