import { isDuplicateKey } from '@lib/db/duplicate-key';
import { TenantRepository } from '@lib/db/tenant-repository';
import {
  browserSessionModel,
  browserSlotModel,
  type BrowserSessionDoc,
  type SessionOwner,
  type SessionStatus,
} from './browser-session.schema';

export interface Screenshot {
  screenshotId: string;
  key: string;
  pageUrl: string | null;
  takenAt: Date;
}

const ownerFilter = (owner: SessionOwner) =>
  owner.type === 'conversation' ? { conversationId: owner.conversationId } : { runId: owner.runId };

/** Browser sessions of one organization; every query is scoped to it. */
export class BrowserSessionsRepository extends TenantRepository {
  private readonly model = this.db.model(browserSessionModel);
  private readonly slots = this.db.model(browserSlotModel);

  async create(sessionId: string, owner: SessionOwner, now: Date): Promise<BrowserSessionDoc> {
    const doc = await this.model.create({
      _id: sessionId,
      organizationId: this.organizationId,
      ownerType: owner.type,
      conversationId: owner.type === 'conversation' ? owner.conversationId : null,
      actionChainId: owner.type === 'chain_run' ? owner.actionChainId : null,
      runId: owner.type === 'chain_run' ? owner.runId : null,
      status: 'active',
      startedAt: now,
      lastActivityAt: now,
    });
    return doc.toObject();
  }

  get(sessionId: string) {
    return this.findOwned(this.model, sessionId);
  }

  /** An owner's sessions, newest first; only the active ones with `activeOnly`. */
  listForOwner(owner: SessionOwner, activeOnly = false) {
    return this.model
      .find(
        this.scope<BrowserSessionDoc>({ ...ownerFilter(owner), ...(activeOnly ? { status: 'active' } : {}) }),
      )
      .sort({ startedAt: -1, _id: -1 })
      .lean<BrowserSessionDoc[]>();
  }

  /** Records the worker queue of the launched browser (only while the session is active). */
  setTaskQueue(sessionId: string, taskQueue: string) {
    return this.model
      .findOneAndUpdate(
        { _id: sessionId, organizationId: this.organizationId, status: 'active' },
        { $set: { taskQueue } },
        { new: true },
      )
      .lean<BrowserSessionDoc>();
  }

  /** After an action: the page it is on now, and a screenshot it took. */
  async recordActivity(sessionId: string, currentUrl: string | null, screenshot?: Screenshot) {
    await this.model.updateOne(
      { _id: sessionId, organizationId: this.organizationId },
      {
        $set: { currentUrl, lastActivityAt: new Date() },
        ...(screenshot ? { $push: { screenshots: screenshot } } : {}),
      },
    );
  }

  /** Ends an active session; null when it had already ended (the first end wins). */
  end(sessionId: string, status: Exclude<SessionStatus, 'active'>, endReason: string) {
    return this.model
      .findOneAndUpdate(
        { _id: sessionId, organizationId: this.organizationId, status: 'active' },
        { $set: { status, endReason, endedAt: new Date() } },
        { new: true },
      )
      .lean<BrowserSessionDoc>();
  }

  /** Takes one of the organization's `limit` session slots for the session; false when all are taken. */
  async claimSlot(sessionId: string, limit: number): Promise<boolean> {
    for (let n = 0; n < limit; n++) {
      try {
        await this.slots.create({
          _id: `${this.organizationId}:${n}`,
          organizationId: this.organizationId,
          sessionId,
        });
        return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
    return false;
  }

  async releaseSlot(sessionId: string) {
    await this.slots.deleteMany({ organizationId: this.organizationId, sessionId });
  }
}
