import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { FAILURES, WORKFLOWS, type InvitationInput } from '@contracts';
import { useTimeSkippingSuite } from '@test/operations/workflow-suite';
import { ORG, callTo, fakeActivities } from '@test/operations/workflow-fakes';

// The workflows alone, on Temporal's time-skipping test server, with every activity replaced: the loop's bounds
// and timers are checked exactly, and a five-minute wait takes no real time.
describe('workflows on the time-skipping test server', () => {
  const { suite, withWorker, turnInput, runTurn } = useTimeSkippingSuite();
  let env: TestWorkflowEnvironment;
  before(() => {
    ({ env } = suite);
  });

  it('stores an error reply when the model fails for good, and reports a failed callback without failing', async () => {
    const fake = fakeActivities(env);
    fake.answers.reply = () => {
      // Thrown as retryable: only the model proxy's retry policy (which lists the type) stops the retries.
      throw ApplicationFailure.retryable('model said no', FAILURES.llmRequestRejected);
    };
    fake.answers.callback = () => Promise.reject(new Error('callback host down'));
    const result = await withWorker(fake, (q) =>
      runTurn(q, turnInput({ callbackUrl: 'https://cb.example/x' })),
    );
    expect(result).to.deep.equal({ messageId: 'msg_1', status: 'error' });
    // A request the model rejects is not retried; a callback that fails is, up to 12 times in all.
    expect(fake.seen.models).to.have.length(1);
    expect(fake.seen.callbacks).to.equal(12);
    expect(fake.seen.replies[0]!.status).to.equal('error');
    expect(fake.seen.replies[0]!.text).to.match(/^The agent could not reply: /);
    expect(fake.seen.callbacks).to.be.greaterThan(1);
    expect(fake.seen.events.find((e) => e.type === 'callback_failed')).to.include({
      error: 'callback host down',
    });
  });

  it('stores an error reply when what the turn needs is gone, and posts it to the callback', async () => {
    const fake = fakeActivities(env);
    fake.answers.turnSetup = () => {
      throw ApplicationFailure.nonRetryable('agent agt_a no longer exists', FAILURES.turnTargetGone);
    };
    const input = turnInput({ callbackUrl: 'https://cb.example/turns' });
    const result = await withWorker(fake, (q) => runTurn(q, input));
    expect(result).to.deep.equal({ messageId: 'msg_1', status: 'error' });
    expect(fake.seen.models).to.deep.equal([]);
    expect(fake.seen.replies).to.deep.equal([
      { text: 'The agent could not reply: agent agt_a no longer exists', status: 'error' },
    ]);
    expect(fake.seen.callbackInputs).to.deep.equal([
      {
        url: 'https://cb.example/turns',
        payload: {
          organizationId: ORG,
          conversationId: 'cnv_1',
          agentId: 'agt_a',
          requestId: input.requestId,
          status: 'error',
          message: { messageId: 'msg_1' },
        },
      },
    ]);
  });

  // Local activities back off in the worker, out of reach of time skipping: this test waits ~56 s of real time.
  it('tries a failing read of our own database 10 times, then replies with the error', async function () {
    this.timeout(180_000);
    const fake = fakeActivities(env);
    let loads = 0;
    fake.answers.turnSetup = () => {
      loads++;
      throw new Error('database unavailable');
    };
    const result = await withWorker(fake, (q) => runTurn(q));
    expect(result.status).to.equal('error');
    expect(loads).to.equal(10);
    expect(fake.seen.replies).to.deep.equal([
      { text: 'The agent could not reply: database unavailable', status: 'error' },
    ]);
  });

  it('tries a failing tool 3 times, a refused tool call once, and gives the model each error', async () => {
    const fake = fakeActivities(env);
    fake.answers.tool = () =>
      Promise.reject(
        fake.seen.tools.length === 1
          ? ApplicationFailure.retryable('no such table', FAILURES.toolInput)
          : new Error('database is restarting'),
      );
    fake.answers.reply = (call) =>
      call.messages.length === 1
        ? { content: '', toolCalls: [callTo('lookup')] }
        : call.messages.length === 3
          ? { content: '', toolCalls: [callTo('lookup')] }
          : { content: 'sorry', toolCalls: [] };
    await withWorker(fake, (q) => runTurn(q));
    // The first call is refused once; the second fails 3 times.
    expect(fake.seen.tools).to.deep.equal(['lookup', 'lookup', 'lookup', 'lookup']);
    const results = fake.seen.models[2]!.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results.map((r) => (JSON.parse(r) as { error: string }).error)).to.deep.equal([
      'no such table',
      'database is restarting',
    ]);
  });

  it('gives up on a callback the service refuses at once, and says so to the client', async () => {
    const fake = fakeActivities(env);
    fake.answers.callback = () =>
      Promise.reject(ApplicationFailure.retryable('private address', FAILURES.callbackRefused));
    const result = await withWorker(fake, (q) => runTurn(q, turnInput({ callbackUrl: 'http://10.0.0.1/' })));
    expect(result.status).to.equal('complete');
    expect(fake.seen.callbacks).to.equal(1);
    expect(fake.seen.events.find((e) => e.type === 'callback_failed')).to.include({
      error: 'private address',
    });
  });

  describe('invitation mail', () => {
    const invitation = (): InvitationInput => ({
      organizationId: ORG,
      organizationName: 'Org',
      userId: `usr_${randomUUID()}`,
      email: 'new@example.test',
      name: 'New',
      role: 'chat',
      invitedByName: 'Owner',
    });
    const sendInvitation = (taskQueue: string, input = invitation()) =>
      env.client.workflow.execute<(i: InvitationInput) => Promise<{ messageId: string }>>(
        WORKFLOWS.invitation,
        { taskQueue, workflowId: `invite-${ORG}-${input.userId}`, args: [input] },
      );
    const failureOf = (run: Promise<unknown>) =>
      run.then(
        () => expect.fail('the invitation workflow succeeded'),
        (err: { cause?: { cause?: Error } }) => err.cause?.cause?.message,
      );

    it('retries a relay that keeps failing 20 times in all, then fails', async () => {
      const fake = fakeActivities(env);
      fake.answers.invitation = () => Promise.reject(new Error('421 try again later'));
      const reason = await withWorker(fake, (q) => failureOf(sendInvitation(q)));
      expect(reason).to.equal('421 try again later');
      expect(fake.seen.invitations).to.equal(20);
    });

    it('stops at once when the relay rejects the message for good', async () => {
      const fake = fakeActivities(env);
      fake.answers.invitation = () =>
        Promise.reject(ApplicationFailure.retryable('550 no such mailbox', FAILURES.permanentMail));
      const reason = await withWorker(fake, (q) => failureOf(sendInvitation(q)));
      expect(reason).to.equal('550 no such mailbox');
      expect(fake.seen.invitations).to.equal(1);
    });

    it('returns the message id of the mail sent', async () => {
      const fake = fakeActivities(env);
      expect(await withWorker(fake, (q) => sendInvitation(q))).to.deep.equal({ messageId: '<m1@test>' });
      expect(fake.seen.invitations).to.equal(1);
    });
  });
});
