import { expect } from 'chai';
import request from 'supertest';
import { OPERATION_RULES } from '@test/fixtures/authorization-matrix';
import {
  callersFor,
  expectedStatus,
  targetsOf,
  type Caller,
  type Target,
} from '@test/fixtures/authorization-oracle';
import {
  BODIES,
  CONSUMES,
  MATRIX_PROMPT_TAG,
  operationsOfOpenapi,
  pathOf,
  permissionScopesOfOpenapi,
  type Operation,
} from '@test/helpers/authz-requests';
import { sceneFor } from '@test/helpers/authz-targets';
import { seedWorld, type MatrixWorld } from '@test/helpers/authz-world';
import { unpolledTestEnv } from '@test/helpers/env';
import type { ChatRequest } from '@test/helpers/llm';

/*
 * Every operation of openapi.yaml, asked by every kind of caller about every kind of target, against the status
 * the spec promises (test/fixtures/authorization-*.ts). Fixtures are seeded once; a row that would use its target
 * up (a delete, an attach) and is expected to succeed gets a target of its own.
 */
const OPERATIONS = operationsOfOpenapi();
const CALLERS = callersFor(permissionScopesOfOpenapi());

interface Row {
  caller: Caller;
  target: Target;
}
function rowsOf(op: Operation): Row[] {
  const rule = OPERATION_RULES[op.operationId];
  if (!rule) return [];
  return CALLERS.flatMap((caller) => targetsOf(op.operationId, rule).map((target) => ({ caller, target })));
}
const PLANNED = OPERATIONS.reduce((n, op) => n + rowsOf(op).length, 0);

async function send(world: MatrixWorld, op: Operation, row: Row) {
  const rule = OPERATION_RULES[op.operationId]!;
  const expected = expectedStatus(op.operationId, rule, op.success, row.caller, row.target);
  const fresh = CONSUMES.has(op.operationId) && expected < 300;
  const { scene, o } = await sceneFor(world, rule.kind, row.target, row.caller.identity, fresh);
  // A foreign target is another organization's resource named under the caller's own organization.
  const pathOrg = row.target === 'foreign' ? world.main : o;
  const body = await BODIES[op.operationId]?.(scene, { world, o, identity: row.caller.identity });
  const token = world.tokens.get(row.caller.name) ?? '';
  const req = request(world.env.app)
    [op.method](pathOf(op, pathOrg.org.organizationId, scene))
    .set('Authorization', `Bearer ${token}`);
  const res = body === undefined ? await req : await req.send(body);
  if (op.operationId === 'createBrowserSession' && res.status === 201) {
    // A session holds one of the organization's few browser slots: give it back.
    const stop = `${pathOf(op, pathOrg.org.organizationId, scene)}/${res.body.sessionId}/stop`;
    await request(world.env.app).post(stop).set('Authorization', `Bearer ${world.main.members.owner.token}`);
  }
  return { expected, actual: res.status, body: res.body as unknown };
}

describe('authorization matrix', function () {
  this.timeout(30 * 60_000);
  let world: MatrixWorld;
  let checked = 0;

  before(async () => {
    // Analyses, chain runs, copies and deliveries the rows start must never run: no worker polls this queue.
    world = await seedWorld(await unpolledTestEnv(), CALLERS);
  });

  it('has rows for every operation of openapi.yaml, and rules only for operations it has', () => {
    const ids = OPERATIONS.map((op) => op.operationId);
    expect(
      ids.filter((id) => !OPERATION_RULES[id]),
      'operations without rows',
    ).to.deep.equal([]);
    expect(
      Object.keys(OPERATION_RULES).filter((id) => !ids.includes(id)),
      'rules of no operation',
    ).to.deep.equal([]);
  });

  for (const op of OPERATIONS) {
    const rows = rowsOf(op);
    if (!rows.length) continue;
    it(`${op.operationId}: ${rows.length} (caller × target) rows`, async () => {
      if (op.operationId === 'generateChainStepFromPrompt') {
        // A usable step, so an allowed caller gets the step rather than a model error.
        const outputSchema = { type: 'object', properties: { summary: { type: 'string' } } };
        const step = {
          name: 'Step',
          description: 'd',
          instructions: 'Do it.',
          reasoning: 'low',
          outputSchema,
        };
        const asked = (body: ChatRequest) => JSON.stringify(body.messages).includes(MATRIX_PROMPT_TAG);
        world.env.llm.on(asked, { content: JSON.stringify(step) });
      }
      const wrong: string[] = [];
      for (const row of rows) {
        const { expected, actual, body } = await send(world, op, row);
        checked++;
        if (actual !== expected)
          wrong.push(
            `${row.caller.name} → ${row.target}: expected ${expected}, got ${actual} ${JSON.stringify(body)}`,
          );
      }
      expect(wrong, `${op.method.toUpperCase()} ${op.path}`).to.deep.equal([]);
    });
  }

  it(`checked ${PLANNED} (operation × caller × target) rows`, () => {
    console.log(
      `      authorization matrix: ${checked} of ${PLANNED} (operation × caller × target) rows checked`,
    );
    expect(checked).to.equal(PLANNED);
  });
});
