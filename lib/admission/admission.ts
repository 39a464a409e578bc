import type { Redis } from 'ioredis';
import { BoundedMap } from '@lib/bounded-map';
import { notFound, TooManyRequestsError } from '@lib/errors';
import type { Logger } from '@lib/logger';
import type { Metrics } from '@lib/observability/metrics';
import { ADMISSION_KINDS, kindLabel, type AdmissionKind, type AdmissionLimits } from './kinds';

export interface AdmissionSettings {
  /** Unfinished executions of each kind one organization may have (operators override them per organization). */
  limits: AdmissionLimits;
  /** The Retry-After of a refusal. */
  retryAfterSeconds: number;
  /** How often a worker frees the slots of executions that ended unreported (lib/admission/reconcile.ts). */
  reconcileIntervalMs: number;
}

/** How long a process goes on using an organization's limits before reading its overrides again. */
const OVERRIDES_TTL_MS = 30_000;

/** Where an operator's overrides are kept: the organization record, which the organization feature owns. */
export interface AdmissionOverrides {
  /** Null when there is no such organization. */
  find(organizationId: string): Promise<{ admissionLimits?: Partial<AdmissionLimits> | null } | null>;
  setAdmissionLimits(organizationId: string, limits: Partial<AdmissionLimits>): Promise<void>;
}

/** The unfinished executions of one organization and kind: a sorted set of workflow ids, scored by admission
 * time. The hash tag keeps one organization's sets in one Redis Cluster slot (the admit script reads several). */
export const admissionKey = (organizationId: string, kind: AdmissionKind) =>
  `admission:{${organizationId}}:${kind}`;

/**
 * KEYS[1] the set the id joins, KEYS[2..] further sets that must have room; ARGV: id, now, then one limit per key.
 * -1: already counted; 0: added; i > 0: refused, KEYS[i] is full.
 */
const ADMIT = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -1 end
for i = 1, #KEYS do
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[i + 2]) then return i end
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 0`;

/** The number of executions counted under each key, in one round trip. */
const COUNTS = `
local counts = {}
for i = 1, #KEYS do counts[i] = redis.call('ZCARD', KEYS[i]) end
return counts`;

/** 429 `backlog_full`: the organization has `limit` unfinished executions of `kind`. */
export class BacklogFullError extends TooManyRequestsError {
  constructor(
    readonly kind: AdmissionKind,
    readonly limit: number,
    retryAfterSeconds: number,
  ) {
    super(
      `this organization has ${limit} ${kindLabel(kind)} unfinished (at most ${limit}); ` +
        `retry after ${retryAfterSeconds} s`,
      retryAfterSeconds,
      'backlog_full',
    );
  }
}

/** What a refused turn's Retry-After says: turns take seconds. */
const TURN_RETRY_AFTER_SECONDS = 5;

/** 429 `too_many_turns`: the organization has `limit` chat turns running. */
export class TooManyTurnsError extends TooManyRequestsError {
  constructor(readonly limit: number) {
    super(
      `this organization already has ${limit} turns running (at most ${limit}); retry shortly`,
      TURN_RETRY_AFTER_SECONDS,
      'too_many_turns',
    );
  }
}

/** What an admitted start holds: undo() gives the slot back when the start did not happen (or found an
 * execution already there) and only if this admission took it. */
export interface Slot {
  undo(): Promise<void>;
  /** the execution the slot counts (its key and workflow id), when admit() added it */
  counts?: string;
}

const NOTHING_TO_UNDO: Slot = { undo: () => Promise.resolve() };

/** Runs `write` holding `slot`, which is given back when `write` fails (nothing is left to count). */
export async function undoOnFailure<T>(slot: Slot | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    await slot?.undo();
    throw err;
  }
}

/**
 * Admission of background work and chat turns (docs/admission.md): each organization has at most `limit`
 * unfinished executions of each kind. Intake admits before it starts the workflow and answers 429 with
 * Retry-After beyond the bound; work already accepted upstream (a delivery's handler runs) is recorded without a
 * bound. The worker releases an execution when it ends (worker/admission-sink.ts), and reconcile() removes what
 * a crash left behind. When Redis cannot be reached, work is admitted: refusing every sender is worse than
 * letting a burst through.
 */
export class Admission {
  private readonly overrides = new BoundedMap<string, { at: number; limits: Partial<AdmissionLimits> }>(
    10_000,
  );

  constructor(
    private readonly redis: Redis,
    private readonly organizations: AdmissionOverrides,
    private readonly settings: AdmissionSettings,
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {}

  /** The organization's limits: the defaults, with the operator's overrides (`cli admission set`). */
  async limits(organizationId: string): Promise<AdmissionLimits> {
    let cached = this.overrides.get(organizationId);
    if (!cached || Date.now() - cached.at > OVERRIDES_TTL_MS) {
      const org = await this.organizations.find(organizationId);
      // An organization that does not exist (a stranger's guess) is not kept: it would push real ones out.
      if (!org) return { ...this.settings.limits };
      cached = { at: Date.now(), limits: org.admissionLimits ?? {} };
      this.overrides.set(organizationId, cached);
    }
    return { ...this.settings.limits, ...cached.limits };
  }

  /** An operator's bound of one kind for one organization; null goes back to the default. Other processes use
   * it within 30 s (they cache an organization's overrides that long). */
  async setLimit(organizationId: string, kind: AdmissionKind, limit: number | null) {
    const org = await this.organizations.find(organizationId);
    if (!org) throw notFound('organization');
    const overrides = { ...org.admissionLimits };
    if (limit === null) delete overrides[kind];
    else overrides[kind] = limit;
    await this.organizations.setAdmissionLimits(organizationId, overrides);
    this.overrides.delete(organizationId);
    return this.usage(organizationId);
  }

  /**
   * Admits one execution of `kind` (its workflow id) if the organization has room for it and for each kind in
   * `alsoBounded` (the work it leads to, like a delivery's chain runs); else a 429 `backlog_full`. An id already
   * counted is admitted again (a retried request).
   */
  async admit(
    organizationId: string,
    kind: AdmissionKind,
    workflowId: string,
    alsoBounded: AdmissionKind[] = [],
  ): Promise<Slot> {
    const kinds = [kind, ...alsoBounded];
    const limits = await this.limits(organizationId);
    let verdict: number;
    try {
      verdict = (await this.redis.eval(
        ADMIT,
        kinds.length,
        ...kinds.map((k) => admissionKey(organizationId, k)),
        workflowId,
        Date.now(),
        ...kinds.map((k) => limits[k]),
      )) as number;
    } catch (err) {
      this.logger.warn({ err, organizationId, kind }, 'admission not checked: redis unavailable');
      return NOTHING_TO_UNDO;
    }
    if (verdict > 0) {
      const full = kinds[verdict - 1]!;
      this.refuse(organizationId, full, limits[full]);
    }
    if (verdict < 0) return NOTHING_TO_UNDO;
    this.metrics?.admissionAdmitted.inc({ organization_id: organizationId, kind });
    return {
      counts: `${admissionKey(organizationId, kind)} ${workflowId}`,
      undo: () => this.release(organizationId, kind, workflowId),
    };
  }

  /**
   * Refuses at once (429 `backlog_full`) when any of `kinds` is full for the organization, before the request
   * reads anything else: what a sender hammering a full backlog costs is one Redis round trip. Admits nothing;
   * admit() still decides. A refusal here says only that the organization's backlog is full, nothing about the
   * resource the request names.
   */
  async refuseIfFull(organizationId: string, kinds: AdmissionKind[]): Promise<void> {
    const limits = await this.limits(organizationId);
    let counts: number[];
    try {
      const keys = kinds.map((k) => admissionKey(organizationId, k));
      counts = (await this.redis.eval(COUNTS, keys.length, ...keys)) as number[];
    } catch {
      return; // admit() decides, and admits when Redis is down
    }
    const full = kinds.find((k, i) => (counts[i] ?? 0) >= limits[k]);
    if (full !== undefined) this.refuse(organizationId, full, limits[full]);
  }

  private refuse(organizationId: string, kind: AdmissionKind, limit: number): never {
    this.metrics?.admissionRefused.inc({ organization_id: organizationId, kind });
    if (kind === 'turns') throw new TooManyTurnsError(limit);
    throw new BacklogFullError(kind, limit, this.settings.retryAfterSeconds);
  }

  /** Counts an execution whose work was admitted upstream: no bound, and never a refusal. */
  async record(organizationId: string, kind: AdmissionKind, workflowId: string): Promise<Slot> {
    try {
      const added = await this.redis.zadd(admissionKey(organizationId, kind), 'NX', Date.now(), workflowId);
      if (!added) return NOTHING_TO_UNDO;
      this.metrics?.admissionAdmitted.inc({ organization_id: organizationId, kind });
      return { undo: () => this.release(organizationId, kind, workflowId) };
    } catch (err) {
      this.logger.warn({ err, organizationId, kind }, 'admission not recorded: redis unavailable');
      return NOTHING_TO_UNDO;
    }
  }

  /**
   * Starts an execution counted as one of `kind`: `admitted` is the slot the request took before it wrote
   * anything (admit), else it is only recorded. The count is given back when the start fails or finds the
   * execution already started (it was counted then, or it has ended).
   */
  async startCounted(
    organizationId: string,
    kind: AdmissionKind,
    workflowId: string,
    start: () => Promise<{ alreadyStarted: boolean }>,
    admitted?: Slot,
  ): Promise<{ alreadyStarted: boolean }> {
    // A slot admit() took for this very execution already counts it: recording it again would be a wasted round trip.
    const counted =
      admitted?.counts === `${admissionKey(organizationId, kind)} ${workflowId}`
        ? NOTHING_TO_UNDO
        : await this.record(organizationId, kind, workflowId);
    const undo = () => Promise.all([counted.undo(), admitted?.undo()]);
    try {
      const started = await start();
      if (started.alreadyStarted) await undo();
      return started;
    } catch (err) {
      await undo();
      throw err;
    }
  }

  /** Gives an execution's slot back (it ended, or never started); nothing when it holds none. A slot Redis
   * could not be told about is freed by the reconciler. */
  async release(organizationId: string, kind: AdmissionKind, workflowId: string): Promise<void> {
    try {
      await this.redis.zrem(admissionKey(organizationId, kind), workflowId);
    } catch (err) {
      this.logger.warn(
        { err, organizationId, kind, workflowId },
        'admission slot not freed: redis unavailable',
      );
    }
  }

  /** Per kind: unfinished executions, the organization's limit and the age of the oldest (seconds, 0 if none). */
  async usage(organizationId: string) {
    const limits = await this.limits(organizationId);
    const now = Date.now();
    const counts = await Promise.all(
      ADMISSION_KINDS.map(async (kind) => {
        const key = admissionKey(organizationId, kind);
        const [unfinished, oldest] = await Promise.all([
          this.redis.zcard(key),
          this.redis.zrange(key, 0, 0, 'WITHSCORES'),
        ]);
        const since = oldest[1] ? Number(oldest[1]) : now;
        return [kind, { unfinished, limit: limits[kind], oldestAgeSeconds: (now - since) / 1000 }] as const;
      }),
    );
    return Object.fromEntries(counts) as Record<
      AdmissionKind,
      { unfinished: number; limit: number; oldestAgeSeconds: number }
    >;
  }
}
