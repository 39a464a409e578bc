import { expect } from 'chai';
import type { TestEnv } from '@test/helpers/env';
import { addMember, as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { invalidReference } from '@test/helpers/errors';
import { useWorkerAndOrg } from '@test/helpers/worker';

describe('users', () => {
  const suite = useWorkerAndOrg('Users Org');
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  const uniqueEmail = (name: string) => `${name}-${Math.random().toString(36).slice(2, 10)}@example.test`;
  const mailTo = (email: string) => env.smtp.messages.filter((m) => m.to.includes(email));

  describe('list', () => {
    it('pages members with a default limit of 100, filters by q and role, and is admin-only', async () => {
      const res = await as(env, org.admin.token).get(org.path('/users')).expect(200);
      expect(res.body.totalRows).to.equal(3);
      expect(res.body.offset).to.equal(0);
      expect(res.body.items.map((m: { role: string }) => m.role)).to.deep.equal(['owner', 'admin', 'chat']);
      expect(res.body.items[0]).to.include({
        organizationId: org.organizationId,
        userId: org.owner.userId,
        email: org.owner.email,
      });

      const paged = await as(env, org.admin.token).get(org.path('/users?limit=1&cursor=1')).expect(200);
      expect(paged.body).to.deep.include({ totalRows: 3, offset: 1 });
      expect(paged.body.items.map((m: { userId: string }) => m.userId)).to.deep.equal([org.admin.userId]);

      const byRole = await as(env, org.owner.token).get(org.path('/users?role=chat')).expect(200);
      expect(byRole.body.items.map((m: { userId: string }) => m.userId)).to.deep.equal([org.chat.userId]);
      const byQ = await as(env, org.owner.token).get(org.path('/users?q=ADAM')).expect(200);
      expect(byQ.body.items.map((m: { userId: string }) => m.userId)).to.deep.equal([org.admin.userId]);
      const regexy = await as(env, org.owner.token).get(org.path('/users?q=.*')).expect(200);
      expect(regexy.body.totalRows).to.equal(0);

      await as(env, org.chat.token).get(org.path('/users')).expect(403);
      await as(env, org.owner.token).get(org.path('/users?role=boss')).expect(400);
      await as(env, org.owner.token).get(org.path('/users?limit=0')).expect(400);
    });

    it('returns up to 100 members when no limit is given', async () => {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) => addMember(env, org.organizationId, 'chat', `bulk${i}`)),
      );
      const res = await as(env, org.owner.token).get(org.path('/users')).expect(200);
      expect(res.body.totalRows).to.equal(103);
      expect(res.body.items).to.have.length(100);
    });
  });

  it('lets any member read one member', async () => {
    const res = await as(env, org.chat.token)
      .get(org.path(`/users/${org.admin.userId}`))
      .expect(200);
    expect(res.body).to.include({
      userId: org.admin.userId,
      role: 'admin',
      name: 'Adam Admin',
      userGroupId: null,
    });
    await as(env, org.chat.token).get(org.path('/users/usr_nobody')).expect(404);
  });

  describe('create', () => {
    it('creates a new account and sends it an invitation email through the workflow', async () => {
      const email = uniqueEmail('newbie');
      const res = await as(env, org.admin.token)
        .post(org.path('/users'), { email, name: 'New Bie', role: 'chat' })
        .expect(201);
      expect(res.body).to.include({
        organizationId: org.organizationId,
        email,
        name: 'New Bie',
        role: 'chat',
      });
      const [mail] = await eventually(() => mailTo(email).length > 0 && mailTo(email));
      expect(mail!.subject).to.equal('You have been invited to Users Org');
      expect(mail!.raw).to.contain('Adam Admin added you to Users Org');
      const handle = env.deps.temporal.client.workflow.getHandle(
        `invite-${org.organizationId}-${res.body.userId}`,
      );
      expect(await handle.result())
        .to.have.property('messageId')
        .that.is.a('string');
      expect(mailTo(email)).to.have.length(1);
    });

    it('retries the invitation when the SMTP server fails temporarily, delivering it once', async () => {
      const email = uniqueEmail('greylisted');
      const attemptsBefore = env.smtp.attempts();
      env.smtp.rejectNext(2);
      const res = await as(env, org.owner.token)
        .post(org.path('/users'), { email, name: 'Grey', role: 'admin' })
        .expect(201);
      await eventually(() => mailTo(email).length > 0, 60_000);
      expect(env.smtp.attempts() - attemptsBefore).to.be.at.least(3);
      expect(mailTo(email)).to.have.length(1);
      const handle = env.deps.temporal.client.workflow.getHandle(
        `invite-${org.organizationId}-${res.body.userId}`,
      );
      const history = await handle.fetchHistory();
      const failures = history.events!.filter(
        (e) =>
          e.activityTaskStartedEventAttributes?.attempt && e.activityTaskStartedEventAttributes.attempt > 1,
      );
      expect(failures).to.have.length(1); // the last, successful attempt is recorded with its attempt number
      expect(failures[0]!.activityTaskStartedEventAttributes!.attempt).to.equal(3);
    });

    it('gives up on an invitation at once when the SMTP server rejects it for good (5xx)', async () => {
      const email = uniqueEmail('unknown-mailbox');
      const attemptsBefore = env.smtp.attempts();
      env.smtp.rejectNext(5, 550);
      try {
        const res = await as(env, org.owner.token)
          .post(org.path('/users'), { email, name: 'Nobody', role: 'chat' })
          .expect(201);
        const handle = env.deps.temporal.client.workflow.getHandle(
          `invite-${org.organizationId}-${res.body.userId}`,
        );
        const failure = await handle.result().then(
          () => expect.fail('an invitation the server refused for good succeeded'),
          (err: Error & { cause?: { cause?: { type?: string } } }) => err,
        );
        expect(failure.cause?.cause?.type).to.equal('PermanentMailError');
        expect(env.smtp.attempts() - attemptsBefore).to.equal(1);
        expect(mailTo(email)).to.have.length(0);
      } finally {
        env.smtp.rejectNext(0);
      }
    });

    it('adds an existing account without creating another or inviting it again', async () => {
      const other = await createTestOrg(env, 'Elsewhere');
      const res = await as(env, org.owner.token)
        .post(org.path('/users'), { email: other.chat.email, name: 'Ignored Name', role: 'admin' })
        .expect(201);
      expect(res.body).to.include({ userId: other.chat.userId, role: 'admin', name: 'Chad Chat' });
      // Still a chat member of the other organization.
      const there = await as(env, other.owner.token)
        .get(other.path(`/users/${other.chat.userId}`))
        .expect(200);
      expect(there.body.role).to.equal('chat');
      expect(mailTo(other.chat.email)).to.have.length(0);
    });

    it('refuses role owner, bad bodies, duplicates and non-admins', async () => {
      const email = uniqueEmail('dup');
      await as(env, org.owner.token)
        .post(org.path('/users'), { email, name: 'O', role: 'owner' })
        .expect(400);
      await as(env, org.owner.token)
        .post(org.path('/users'), { email: 'nope', name: 'O', role: 'chat' })
        .expect(400);
      await as(env, org.owner.token).post(org.path('/users'), { email, role: 'chat' }).expect(400);
      await as(env, org.chat.token).post(org.path('/users'), { email, name: 'O', role: 'chat' }).expect(403);
      await as(env, org.owner.token).post(org.path('/users'), { email, name: 'O', role: 'chat' }).expect(201);
      const dup = await as(env, org.owner.token)
        .post(org.path('/users'), { email: email.toUpperCase(), name: 'O', role: 'chat' })
        .expect(409);
      expect(dup.body.error.code).to.equal('conflict');
    });
  });

  describe('update role', () => {
    it('changes a role, but never your own, never to owner, and never an owner by an admin', async () => {
      const res = await as(env, org.admin.token)
        .put(org.path(`/users/${org.chat.userId}`), { role: 'admin' })
        .expect(200);
      expect(res.body.role).to.equal('admin');
      const self = await as(env, org.admin.token)
        .put(org.path(`/users/${org.admin.userId}`), { role: 'chat' })
        .expect(403);
      expect(self.body.error.message).to.contain('own role');
      await as(env, org.owner.token)
        .put(org.path(`/users/${org.owner.userId}`), { role: 'admin' })
        .expect(403);
      await as(env, org.owner.token)
        .put(org.path(`/users/${org.chat.userId}`), { role: 'owner' })
        .expect(400);
      await as(env, org.admin.token)
        .put(org.path(`/users/${org.owner.userId}`), { role: 'chat' })
        .expect(403);
      await as(env, org.owner.token).put(org.path('/users/usr_nobody'), { role: 'chat' }).expect(404);
    });
  });

  describe('delete', () => {
    it('removes the membership only, keeping the account in its other organizations', async () => {
      const other = await createTestOrg(env, 'Second Home');
      await as(env, org.owner.token)
        .post(org.path('/users'), { email: other.admin.email, name: 'x', role: 'chat' })
        .expect(201);
      const res = await as(env, org.owner.token)
        .delete(org.path(`/users/${other.admin.userId}`))
        .expect(200);
      expect(res.body).to.deep.equal({
        message: 'user removed from organization',
        reassignedWorkflows: 0,
        userId: other.admin.userId,
      });
      await as(env, org.owner.token)
        .get(org.path(`/users/${other.admin.userId}`))
        .expect(404);
      await as(env, other.owner.token)
        .get(other.path(`/users/${other.admin.userId}`))
        .expect(200);
    });

    it('refuses an admin deleting an owner, and the last owner leaving', async () => {
      const refused = await as(env, org.admin.token)
        .delete(org.path(`/users/${org.owner.userId}`))
        .expect(403);
      expect(refused.body.error.message).to.contain('only owners');
      const last = await as(env, org.owner.token)
        .delete(org.path(`/users/${org.owner.userId}`))
        .expect(409);
      expect(last.body.error.code).to.equal('last_owner');
    });

    it('lets an owner delete another owner', async () => {
      const second = await addMember(env, org.organizationId, 'owner', 'second');
      await as(env, org.owner.token)
        .delete(org.path(`/users/${second.userId}`))
        .expect(200);
    });

    it('keeps an owner when two owners remove or demote each other at the same moment', async () => {
      const owners = () => env.deps.repos.tenant(org.organizationId).members.countByRole('owner');
      for (let round = 0; round < 6; round++) {
        const a = org.owner;
        const b = await addMember(env, org.organizationId, 'owner', `Second ${round}`);
        const act = (actor: typeof a, target: typeof b) =>
          round % 2 === 0
            ? as(env, actor.token).delete(org.path(`/users/${target.userId}`))
            : as(env, actor.token).put(org.path(`/users/${target.userId}`), { role: 'admin' });
        const answers = await Promise.all([act(a, b), act(b, a)]);
        expect(await owners(), `round ${round}: ${answers.map((r) => r.status).join(', ')}`).to.be.at.least(
          1,
        );
        for (const res of answers) expect(res.status, res.text).to.be.oneOf([200, 401, 403, 404, 409]);
        // Back to one owner (org.owner) for the next round.
        const tenant = env.deps.repos.tenant(org.organizationId);
        if (!(await tenant.members.get(a.userId)))
          await tenant.members.add({ _id: a.userId, name: 'Olive Owner', email: a.email }, 'owner');
        await tenant.members.setRole(a.userId, 'owner');
        await tenant.members.remove(b.userId);
      }
    });

    it('validates reassignWorkflowsTo against the members: a member named in the query that is missing is 400 invalid_reference', async () => {
      await as(env, org.owner.token)
        .delete(org.path(`/users/${org.chat.userId}?reassignWorkflowsTo=usr_nobody`))
        .expect(invalidReference('reassignWorkflowsTo'));
      await as(env, org.owner.token)
        .delete(org.path(`/users/${org.chat.userId}?reassignWorkflowsTo=${org.chat.userId}`))
        .expect(400);
      await as(env, org.owner.token)
        .delete(org.path(`/users/${org.chat.userId}?reassignWorkflowsTo=${org.admin.userId}`))
        .expect(200);
    });

    it('refuses chat members and other organizations', async () => {
      const other = await createTestOrg(env, 'Intruder');
      await as(env, org.chat.token)
        .delete(org.path(`/users/${org.admin.userId}`))
        .expect(403);
      await as(env, other.owner.token)
        .delete(org.path(`/users/${org.admin.userId}`))
        .expect(401);
      await as(env, org.owner.token)
        .delete(org.path(`/users/${other.admin.userId}`))
        .expect(404);
    });
  });
});
