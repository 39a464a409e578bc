import { expect } from 'chai';
import type { EtlRuleBody } from '@lib/knowledge-bases/etl-rules.service';
import { admin, member } from './kb-search-world';
import { outcome, worldOf, type Setup } from './kb-manage-world';

/*
 * docs/knowledge-bases.md, ETL rules: "`agent` rules (agentId + prompt) … run with their [creator's] rights (they
 * must be able to use the agent) … `workflow` rules (workflowId: a file action chain of the organization) …
 * `action-chain` is refused." openapi.yaml (EtlRuleWrite, createEtlRule, updateEtlRule): "Each condition but the
 * last has a mergeOperator; the last has none"; "a workflow rule's chain has inputType file"; "the body is the whole
 * rule, validated as on create"; listEtlRules "oldest first". Writes to an ORGANIZATION knowledge base (its ETL
 * rules too) need admin or owner; a personal one also its creator; reads follow the knowledge base's.
 */

const setup: Setup = {
  kbs: [
    { organizationId: 'org_1', knowledgeBaseId: 'kb_handbook', type: 'ORGANIZATION' },
    { organizationId: 'org_1', knowledgeBaseId: 'kb_ann', type: 'PERSONAL', creatorUserId: 'usr_ann' },
    { organizationId: 'org_1', knowledgeBaseId: 'kb_bob', type: 'PERSONAL', creatorUserId: 'usr_bob' },
  ],
  agents: [
    { organizationId: 'org_1', agentId: 'agt_help', name: 'Helper' },
    { organizationId: 'org_1', agentId: 'agt_desk', name: 'Desk' },
  ],
  agentsOf: { usr_ann: ['agt_help'], usr_bob: ['agt_desk'], usr_boss: ['agt_help'] },
  chains: { chn_file: 'file', chn_text: 'text' },
};
const ann = member('usr_ann');
const boss = admin('usr_boss');

const pdfLeases = [
  { field: 'fileName', comparison: 'ENDS_WITH', value: '.pdf', mergeOperator: 'AND' },
  { field: 'fileName', comparison: 'CONTAINS', value: 'lease' },
] as EtlRuleBody['conditions'];
const agentRule: EtlRuleBody = {
  etlType: 'agent',
  agentId: 'agt_help',
  prompt: 'Summarise it',
  conditions: pdfLeases,
};
const workflowRule: EtlRuleBody = { etlType: 'workflow', workflowId: 'chn_file', conditions: [] };
const invalid = (message: string) => `400 validation_failed: ${message}`;
const CHANGE_ROLE = '403 forbidden: changing an organization knowledge base needs the admin or owner role';

describe('ETL rules service (unit, stores in memory)', () => {
  it('stores an agent rule with its creator and only the fields of each condition', async () => {
    const w = worldOf(setup);
    const conditions = [
      { field: 'contentType', comparison: 'IS_EMPTY', mergeOperator: 'OR', note: 'dropped' },
      { field: 'extension', comparison: 'EQUALS', value: 'pdf' },
    ] as unknown as EtlRuleBody['conditions'];
    const view = await w.etlRules.create(boss, 'kb_handbook', { ...agentRule, conditions });
    expect(view.etlId).to.match(/^etl_.+/);
    expect(view).to.deep.include({
      knowledgeBaseId: 'kb_handbook',
      organizationId: 'org_1',
      etlType: 'agent',
      agentId: 'agt_help',
      prompt: 'Summarise it',
      workflowId: null,
      creatorUserId: 'usr_boss',
    });
    // The valueless comparison has no value key at all; the last condition no mergeOperator key.
    expect(w.rules[0]!.conditions).to.deep.equal([
      { field: 'contentType', comparison: 'IS_EMPTY', mergeOperator: 'OR' },
      { field: 'extension', comparison: 'EQUALS', value: 'pdf' },
    ]);
    expect(view.conditions).to.deep.equal(w.rules[0]!.conditions);
  });

  it('stores a workflow rule naming a file action chain, with no agent and the prompt only when given', async () => {
    const w = worldOf(setup);
    expect(await w.etlRules.create(boss, 'kb_handbook', { ...workflowRule, agentId: null })).to.deep.include({
      etlType: 'workflow',
      agentId: null,
      prompt: null,
      workflowId: 'chn_file',
      conditions: [],
    });
    expect(await w.etlRules.create(boss, 'kb_handbook', { ...workflowRule, prompt: 'note' })).to.include({
      prompt: 'note',
    });
  });

  it('refuses what the docs refuse, naming what is wrong, and stores nothing', async () => {
    const w = worldOf(setup);
    const refused: Array<[EtlRuleBody, string]> = [
      [
        { etlType: 'action-chain', workflowId: 'chn_file', conditions: [] },
        invalid("etlType 'action-chain' is deprecated; use 'workflow' with the chain's id as workflowId"),
      ],
      [{ ...agentRule, agentId: undefined }, invalid("an 'agent' rule needs agentId and prompt")],
      [{ ...agentRule, prompt: null }, invalid("an 'agent' rule needs agentId and prompt")],
      [{ ...agentRule, prompt: '' }, invalid("an 'agent' rule needs agentId and prompt")],
      [{ ...agentRule, workflowId: 'chn_file' }, invalid("an 'agent' rule takes no workflowId")],
      [
        { ...agentRule, agentId: 'agt_desk' },
        '400 invalid_reference: agentId: agt_desk does not exist or is not visible to you',
      ],
      [
        { ...agentRule, agentId: 'agt_none' },
        '400 invalid_reference: agentId: agt_none does not exist or is not visible to you',
      ],
      [{ ...workflowRule, workflowId: undefined }, invalid("a 'workflow' rule needs workflowId")],
      [{ ...workflowRule, agentId: 'agt_help' }, invalid("a 'workflow' rule takes no agentId")],
      [
        { ...workflowRule, workflowId: 'chn_none' },
        '400 invalid_reference: workflowId: chn_none does not exist or is not visible to you',
      ],
      [
        { ...workflowRule, workflowId: 'chn_text' },
        invalid("the action chain chn_text must have inputType 'file' to run on files"),
      ],
      [
        { ...workflowRule, conditions: [{ ...pdfLeases[0]!, mergeOperator: undefined }, pdfLeases[1]!] },
        invalid('conditions[0]: mergeOperator (AND or OR) joins it to the next condition and is required'),
      ],
      [
        { ...workflowRule, conditions: [pdfLeases[0]!, { ...pdfLeases[1]!, mergeOperator: 'OR' }] },
        invalid('conditions[1]: the last condition takes no mergeOperator'),
      ],
      [
        { ...agentRule, conditions: [{ field: 'fileName', comparison: 'IS_NOT_EMPTY', value: 'x' }] },
        invalid('conditions[0]: IS_NOT_EMPTY takes no value'),
      ],
    ];
    for (const [body, expected] of refused)
      expect(await outcome(w.etlRules.create(boss, 'kb_handbook', body)), JSON.stringify(body)).to.equal(
        expected,
      );
    expect(w.rules).to.deep.equal([]);
  });

  it("lets a member write rules of their own personal knowledge base, read an organization one's, and no more", async () => {
    const w = worldOf(setup);
    await w.etlRules.create(boss, 'kb_handbook', workflowRule);
    const own = await w.etlRules.create(ann, 'kb_ann', agentRule);
    expect(own).to.include({ knowledgeBaseId: 'kb_ann', creatorUserId: 'usr_ann' });
    expect(await outcome(w.etlRules.create(ann, 'kb_handbook', workflowRule))).to.equal(CHANGE_ROLE);
    expect(await outcome(w.etlRules.create(ann, 'kb_bob', workflowRule))).to.equal(
      '404 not_found: knowledge base not found',
    );
    expect((await w.etlRules.list(ann, 'kb_handbook')).map((r) => r.workflowId)).to.deep.equal(['chn_file']);
    expect(await outcome(w.etlRules.list(member('usr_bob'), 'kb_ann'))).to.equal(
      '404 not_found: knowledge base not found',
    );
    expect(await outcome(w.etlRules.get(member('usr_bob'), 'kb_ann', own.etlId))).to.equal(
      '404 not_found: knowledge base not found',
    );
    expect(w.rules.map((r) => r.knowledgeBaseId)).to.deep.equal(['kb_handbook', 'kb_ann']);
  });

  it('lists the rules of one knowledge base oldest first and gets one only under its own knowledge base', async () => {
    const w = worldOf(setup);
    const first = await w.etlRules.create(boss, 'kb_handbook', agentRule);
    const second = await w.etlRules.create(boss, 'kb_handbook', workflowRule);
    const elsewhere = await w.etlRules.create(boss, 'kb_bob', workflowRule);
    expect((await w.etlRules.list(ann, 'kb_handbook')).map((r) => r.etlId)).to.deep.equal([
      first.etlId,
      second.etlId,
    ]);
    expect(await w.etlRules.get(ann, 'kb_handbook', second.etlId)).to.deep.equal(second);
    expect(await outcome(w.etlRules.get(ann, 'kb_handbook', elsewhere.etlId))).to.equal(
      '404 not_found: ETL rule not found',
    );
  });

  it('replaces a whole rule, validated as on create, keeping its creator; an unknown rule is 404', async () => {
    const w = worldOf(setup);
    const rule = await w.etlRules.create(boss, 'kb_handbook', agentRule);
    const chief = admin('usr_chief');
    const replaced = await w.etlRules.update(chief, 'kb_handbook', rule.etlId, workflowRule);
    expect(replaced).to.deep.include({
      etlId: rule.etlId,
      etlType: 'workflow',
      agentId: null,
      prompt: null,
      workflowId: 'chn_file',
      conditions: [],
      creatorUserId: 'usr_boss',
    });
    expect(
      await outcome(
        w.etlRules.update(boss, 'kb_handbook', rule.etlId, { ...workflowRule, workflowId: 'chn_text' }),
      ),
    ).to.equal(invalid("the action chain chn_text must have inputType 'file' to run on files"));
    expect(await outcome(w.etlRules.update(ann, 'kb_handbook', rule.etlId, agentRule))).to.equal(CHANGE_ROLE);
    expect(w.rules[0]).to.include({ etlType: 'workflow', workflowId: 'chn_file' });
    expect(await outcome(w.etlRules.update(boss, 'kb_handbook', 'etl_none', workflowRule))).to.equal(
      '404 not_found: ETL rule not found',
    );
    expect(await outcome(w.etlRules.update(boss, 'kb_bob', rule.etlId, workflowRule))).to.equal(
      '404 not_found: ETL rule not found',
    );
  });

  it('deletes a rule once, only under its own knowledge base and only for who may change it', async () => {
    const w = worldOf(setup);
    const rule = await w.etlRules.create(boss, 'kb_handbook', agentRule);
    expect(await outcome(w.etlRules.remove(ann, 'kb_handbook', rule.etlId))).to.equal(CHANGE_ROLE);
    expect(await outcome(w.etlRules.remove(boss, 'kb_bob', rule.etlId))).to.equal(
      '404 not_found: ETL rule not found',
    );
    expect(w.rules).to.have.length(1);
    expect(await w.etlRules.remove(boss, 'kb_handbook', rule.etlId)).to.deep.equal({
      etlId: rule.etlId,
      knowledgeBaseId: 'kb_handbook',
    });
    expect(w.rules).to.deep.equal([]);
    expect(await outcome(w.etlRules.remove(boss, 'kb_handbook', rule.etlId))).to.equal(
      '404 not_found: ETL rule not found',
    );
  });
});
