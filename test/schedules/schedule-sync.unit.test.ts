/* eslint-disable @typescript-eslint/require-await -- the stand-ins are async like the Temporal client and repositories they replace */
import { expect } from 'chai';
import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ScheduleSync } from '@lib/schedules/schedule-sync';

/**
 * ScheduleSync over an in-memory Temporal and an in-memory trigger store: what the sync leaves on the Schedule and
 * on the record is what docs/schedules.md promises (the Schedule carries the record's revision; syncPending is
 * cleared only once they agree; a deleted trigger's Schedule and records go).
 */

const ORG = 'org-1';
const TRIGGER = 'sch-1';
const SCHEDULE_ID = `schedule-${ORG}-${TRIGGER}`; // docs/schedules.md: `schedule-<org>-<triggerId>`

interface TriggerRecord {
  _id: string;
  organizationId: string;
  cronExpression: string;
  revision: number;
  syncPending: boolean;
  deletedAt: Date | null;
}

interface StoredSchedule {
  options: Record<string, unknown>;
  note: string;
  updates: number;
  recentActions: Array<{ action: { workflow: { workflowId: string; firstExecutionRunId: string } } }>;
}

/** Runs `change` just before a sync's second read of the trigger: the read-back after its update. */
function beforeReadBack(w: ReturnType<typeof world>, change: () => void) {
  let reads = 0;
  w.hooks.onRead = () => {
    reads += 1;
    if (reads === 2) change();
  };
}

function world() {
  const records = new Map<string, TriggerRecord>();
  const schedules = new Map<string, StoredSchedule>();
  const workflowStatus = new Map<string, string>();
  const removed: string[] = [];
  const warnings: unknown[] = [];
  /** Runs on every read of a record, to let a test write between the sync's steps. */
  const hooks = {
    onRead: (_id: string) => {},
    onCreate: (_id: string) => {},
    refuse: null as Error | null,
    /** Workflow ids already taken, besides the ones started here. */
    taken: (_id: string) => false,
  };
  /** Workflows started outside any Schedule (fires asked now), by id. */
  const started = new Map<string, { args: unknown[]; typedSearchAttributes: unknown }>();

  const notFound = (id: string) => new ScheduleNotFoundError('not found', id);
  const handle = (scheduleId: string) => ({
    scheduleId,
    async describe() {
      const s = schedules.get(scheduleId);
      if (!s) throw notFound(scheduleId);
      return { state: { note: s.note }, info: { recentActions: s.recentActions } };
    },
    async update(fn: () => Record<string, unknown>) {
      const s = schedules.get(scheduleId);
      if (!s) throw notFound(scheduleId);
      const options = fn();
      Object.assign(s, { options, note: (options.state as { note: string }).note, updates: s.updates + 1 });
    },
    async delete() {
      if (!schedules.delete(scheduleId)) throw notFound(scheduleId);
    },
  });
  const temporal = {
    taskQueue: 'main',
    connection: { withDeadline: (_deadline: number, fn: () => Promise<unknown>) => fn() },
    client: {
      schedule: {
        getHandle: handle,
        async create(options: Record<string, unknown> & { scheduleId: string }) {
          hooks.onCreate(options.scheduleId);
          if (hooks.refuse) throw hooks.refuse;
          if (schedules.has(options.scheduleId))
            throw new ScheduleAlreadyRunning('exists', options.scheduleId);
          const note = (options.state as { note: string }).note;
          schedules.set(options.scheduleId, { options, note, updates: 0, recentActions: [] });
        },
      },
      workflow: {
        getHandle: (workflowId: string) => ({
          describe: async () => ({ status: { name: workflowStatus.get(workflowId) ?? 'COMPLETED' } }),
        }),
        async start(
          type: string,
          options: { workflowId: string; args: unknown[]; typedSearchAttributes: unknown },
        ) {
          expect(type).to.equal('scheduleFireWorkflow');
          if (started.has(options.workflowId) || hooks.taken(options.workflowId))
            throw new WorkflowExecutionAlreadyStartedError('taken', options.workflowId, type);
          started.set(options.workflowId, options);
          workflowStatus.set(options.workflowId, 'RUNNING');
        },
        async count(query: string) {
          const m = /^WorkflowId STARTS_WITH '([^']+)' AND ExecutionStatus = 'Running'$/.exec(query);
          expect(m, query).to.not.equal(null);
          const running = [...workflowStatus].filter(([id, s]) => id.startsWith(m![1]!) && s === 'RUNNING');
          return { count: running.length };
        },
      },
    },
  };
  const copy = (r: TriggerRecord | undefined) => (r ? { ...r } : null);
  const scheduleTriggers = {
    async getIncludingDeleted(id: string) {
      hooks.onRead(id);
      return copy(records.get(id));
    },
    async get(id: string) {
      const r = records.get(id);
      return r && !r.deletedAt ? { ...r } : null;
    },
    async markSynced(id: string, revision: number) {
      const r = records.get(id);
      if (!r || r.revision !== revision) return false;
      r.syncPending = false;
      return true;
    },
    async purge(id: string) {
      if (records.get(id)?.deletedAt) records.delete(id);
    },
  };
  const store = {
    scheduleTriggers,
    scheduleHandlers: { removeForTrigger: async (id: string) => void removed.push(`handlers ${id}`) },
  };
  const repos = {
    tenant: (org: string) =>
      org === ORG
        ? store
        : {
            ...store,
            scheduleTriggers: {
              ...scheduleTriggers,
              get: async () => null,
              getIncludingDeleted: async () => null,
            },
          },
  };
  const handlerRuns = { removeFor: async (_org: string, id: string) => void removed.push(`runs ${id}`) };
  const logger = { warn: (...args: unknown[]) => void warnings.push(args) };
  const sync = new ScheduleSync(repos as never, handlerRuns, temporal as never, logger as never);
  const save = (cronExpression: string, revision: number, deletedAt: Date | null = null) =>
    records.set(TRIGGER, {
      _id: TRIGGER,
      organizationId: ORG,
      cronExpression,
      revision,
      syncPending: true,
      deletedAt,
    });
  return { sync, records, schedules, started, workflowStatus, removed, warnings, hooks, save };
}

describe('schedule sync (unit)', () => {
  it('creates a missing Schedule that starts the fire workflow in UTC, tagged with its organization and trigger', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    expect(await w.sync.sync(ORG, TRIGGER)).to.equal(true);
    const s = w.schedules.get(SCHEDULE_ID)!;
    expect(s.note).to.equal('revision 1');
    const options = s.options as {
      spec: { timezone: string };
      action: { type: string; workflowId: string };
      typedSearchAttributes: Array<{ key: { name: string }; value: string }>;
    };
    expect(options.spec.timezone).to.equal('UTC');
    expect(options.action.type).to.equal('startWorkflow');
    expect(options.action.workflowId).to.equal(`schedule-fire-${ORG}-${TRIGGER}`);
    const tags = options.typedSearchAttributes.map((p) => `${p.key.name}=${p.value}`);
    expect(tags).to.include.members([`OrganizationId=${ORG}`, `TriggerId=${TRIGGER}`]);
    expect(w.records.get(TRIGGER)!.syncPending).to.equal(false);
  });

  it('leaves a Schedule that already carries the record revision untouched', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    await w.sync.sync(ORG, TRIGGER);
    // A second sync of the same revision (the reconciler after an inline sync) has nothing to apply.
    w.records.get(TRIGGER)!.syncPending = true;
    expect(await w.sync.sync(ORG, TRIGGER)).to.equal(true);
    expect(w.schedules.get(SCHEDULE_ID)!.updates).to.equal(0);
    expect(w.records.get(TRIGGER)!.syncPending).to.equal(false);
  });

  it('applies a write that lands between its update and its read-back before clearing syncPending', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    await w.sync.sync(ORG, TRIGGER);
    w.save('0 9 * * *', 2);
    // The second read is the read-back: a newer revision is saved just before it.
    beforeReadBack(w, () => w.save('0 18 * * *', 3));
    expect(await w.sync.sync(ORG, TRIGGER)).to.equal(true);
    expect(w.schedules.get(SCHEDULE_ID)!.note).to.equal('revision 3');
    expect(w.records.get(TRIGGER)!.syncPending).to.equal(false);
  });

  it('deletes the Schedule of a trigger deleted in between, and the read-back sees the tombstone', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    await w.sync.sync(ORG, TRIGGER);
    w.save('0 9 * * *', 2);
    beforeReadBack(w, () => w.records.delete(TRIGGER)); // purged by another sync meanwhile
    expect(await w.sync.sync(ORG, TRIGGER)).to.equal(true);
    expect(w.schedules.has(SCHEDULE_ID)).to.equal(false);
  });

  it('purges a deleted trigger whose Schedule is already gone', async () => {
    const w = world();
    w.save('30 7 * * *', 2, new Date());
    expect(await w.sync.sync(ORG, TRIGGER)).to.equal(true);
    expect(w.records.has(TRIGGER)).to.equal(false);
    expect(w.removed).to.deep.equal([`handlers ${TRIGGER}`, `runs ${TRIGGER}`]);
  });

  it('takes a Schedule created by a concurrent sync as its own and finishes', async () => {
    const w = world();
    w.save('30 7 * * *', 2);
    w.hooks.onCreate = (id) => {
      // The other sync created it a moment before, at the previous revision.
      if (!w.schedules.has(id))
        w.schedules.set(id, { options: {}, note: 'revision 1', updates: 0, recentActions: [] });
    };
    expect(await w.sync.sync(ORG, TRIGGER)).to.equal(true);
    expect(w.schedules.get(SCHEDULE_ID)!.note).to.equal('revision 2');
  });

  it('rejects when Temporal refuses the creation for another reason', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    w.hooks.refuse = new Error('Temporal unavailable');
    let failure: unknown = null;
    await w.sync.sync(ORG, TRIGGER).catch((err: unknown) => (failure = err));
    expect((failure as Error | null)?.message).to.equal('Temporal unavailable');
  });

  it('gives up (false, syncPending kept) when the record changes on every round', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    let revision = 1;
    w.hooks.onRead = () => w.save('30 7 * * *', ++revision);
    expect(await w.sync.sync(ORG, TRIGGER)).to.equal(false);
    expect(w.records.get(TRIGGER)!.syncPending).to.equal(true);
  });

  it('trySync answers false and warns instead of throwing', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    w.hooks.refuse = new Error('Temporal unavailable');
    expect(await w.sync.trySync(ORG, TRIGGER)).to.equal(false);
    expect(w.warnings).to.have.length(1);
  });

  it('fireNow starts one fire workflow per call, named by the time it was asked, with no Schedule needed', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    const before = Date.now();
    expect(await w.sync.fireNow(ORG, TRIGGER)).to.deep.equal({ triggerId: TRIGGER });
    expect(await w.sync.fireNow(ORG, TRIGGER)).to.deep.equal({ triggerId: TRIGGER });
    // docs/schedules.md: `schedule-fire-<org>-<triggerId>-now-<time asked>`, to the millisecond
    const ids = [...w.started.keys()];
    expect(ids).to.have.length(2);
    for (const id of ids) {
      const at = /^schedule-fire-org-1-sch-1-now-(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)$/.exec(
        id,
      )?.[1];
      expect(at, id).to.be.a('string');
      expect(Date.parse(at!)).to.be.at.least(before);
    }
    const fire = w.started.get(ids[0]!)!;
    expect(fire.args).to.deep.equal([{ organizationId: ORG, triggerId: TRIGGER }]);
    expect(JSON.stringify(fire.typedSearchAttributes)).to.include(ORG).and.include(TRIGGER);
    expect(w.schedules.size).to.equal(0);
  });

  it('fireNow takes the next millisecond when another fire asked now has this one', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    const refused: string[] = [];
    w.hooks.taken = (id) => refused.length < 3 && refused.push(id) > 0;
    await w.sync.fireNow(ORG, TRIGGER);
    const [id] = [...w.started.keys()];
    const time = (i: string) => Date.parse(i.slice(i.indexOf('-now-') + 5));
    expect(refused).to.have.length(3);
    expect(refused.map(time)).to.deep.equal([0, 1, 2].map((d) => time(refused[0]!) + d));
    expect(time(id!)).to.equal(time(refused[0]!) + 3);
    // and gives up, with Temporal's answer, when every try is taken
    w.hooks.taken = () => true;
    const err = await w.sync.fireNow(ORG, TRIGGER).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(WorkflowExecutionAlreadyStartedError);
    expect(w.started.size).to.equal(1);
  });

  it('fireNow answers null, firing nothing, for a trigger the organization does not have', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    await w.sync.sync(ORG, TRIGGER);
    expect(await w.sync.fireNow('org-2', TRIGGER)).to.equal(null);
    w.records.get(TRIGGER)!.deletedAt = new Date();
    expect(await w.sync.fireNow(ORG, TRIGGER)).to.equal(null);
    expect(w.started.size).to.equal(0);
  });

  it('counts running fires among the last three only', async () => {
    const w = world();
    w.save('30 7 * * *', 1);
    await w.sync.sync(ORG, TRIGGER);
    const ids = ['f1', 'f2', 'f3', 'f4', 'f5'];
    w.schedules.get(SCHEDULE_ID)!.recentActions = ids.map((workflowId) => ({
      action: { workflow: { workflowId, firstExecutionRunId: `run-${workflowId}` } },
    }));
    for (const id of ids) w.workflowStatus.set(id, 'RUNNING');
    w.workflowStatus.set('f4', 'COMPLETED');
    expect(await w.sync.runningFires(ORG, TRIGGER)).to.equal(2);
    // fires asked now are not the Schedule's actions: they count while they run
    await w.sync.fireNow(ORG, TRIGGER);
    await w.sync.fireNow(ORG, TRIGGER);
    expect(await w.sync.runningFires(ORG, TRIGGER)).to.equal(4);
    w.workflowStatus.set([...w.started.keys()][0]!, 'COMPLETED');
    expect(await w.sync.runningFires(ORG, TRIGGER)).to.equal(3);
  });
});
