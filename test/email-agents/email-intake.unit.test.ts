import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { expect } from 'chai';
import { EmailIntake } from '@lib/email-agents/email-intake';
import type { TemporalDeps } from '@lib/temporal/client';

const route = { organizationId: 'org_1', agentId: 'agt_1' };
const raw = Buffer.from(
  'From: member@example.test\r\nMessage-ID: <question@example.test>\r\nSubject: Numbers\r\n\r\nHow many?\r\n',
);
// sha256('id:question@example.test'), its first 40 hex digits; and sha256 of `raw`, its first 16.
const messageKey = 'a8500591c111370930ed6fa2b061fafc326636c9';
const contentHash = '83a130fa60994865';
const workflowId = `email-org_1-agt_1-${messageKey}`;

/** An intake over a Temporal that knows the workflow (or not) and may find it started by someone else. */
function intakeWith(temporal: { known?: boolean; raced?: boolean } = {}) {
  const stored: unknown[][] = [];
  const started: Array<{ workflowId: string; workflowIdReusePolicy: string; args: unknown[] }> = [];
  const workflow = {
    getHandle: () => ({
      describe: () =>
        temporal.known ? Promise.resolve({}) : Promise.reject(new Error('workflow not found')),
    }),
    start: (_type: string, options: (typeof started)[number]) => {
      if (temporal.raced)
        return Promise.reject(new WorkflowExecutionAlreadyStartedError('started', options.workflowId, 'w'));
      started.push(options);
      return Promise.resolve({});
    },
  };
  const intake = new EmailIntake(
    { findAgentEmailCrossOrg: () => Promise.resolve(null) },
    { put: (...args: unknown[]) => Promise.resolve(void stored.push(args)) },
    { client: { workflow }, taskQueue: 'mail' } as unknown as TemporalDeps,
    ['agents.example.test'],
  );
  return { intake, stored, started };
}

describe('the mail intake', () => {
  it('stores a new mail under its agent, Message-ID key and content hash, then starts its workflow', async () => {
    const { intake, stored, started } = intakeWith();
    expect(await intake.accept(route, raw, 'member@example.test')).to.deep.equal({
      workflowId,
      duplicate: false,
    });
    const objectKey = `email/org_1/agt_1/${messageKey}/${contentHash}.eml`;
    expect(stored).to.deep.equal([[objectKey, raw, 'message/rfc822']]);
    expect(started.map((s) => [s.workflowId, s.workflowIdReusePolicy, s.args])).to.deep.equal([
      [
        workflowId,
        'REJECT_DUPLICATE',
        [{ ...route, messageKey, objectKey, envelopeFrom: 'member@example.test' }],
      ],
    ]);
  });

  it('takes a redelivered mail whose workflow exists as a duplicate, storing nothing again', async () => {
    const { intake, stored, started } = intakeWith({ known: true });
    expect(await intake.accept(route, raw, 'member@example.test')).to.deep.equal({
      workflowId,
      duplicate: true,
    });
    expect(stored).to.deep.equal([]);
    expect(started).to.deep.equal([]);
  });

  it('takes a mail whose workflow another delivery started meanwhile as a duplicate', async () => {
    const { intake } = intakeWith({ raced: true });
    expect(await intake.accept(route, raw, 'member@example.test')).to.deep.equal({
      workflowId,
      duplicate: true,
    });
  });
});
