import { createHash } from 'node:crypto';
import { WORKFLOWS, workflowIds, type InboundEmailWorkflow } from '@contracts';
import { inAgentDomains } from '@lib/agents/agent-email-domains';
import type { ObjectStore } from '@lib/knowledge-bases/object-store';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import { messageKeyOf, normaliseMessageId, rawHeader } from './mime';
import type { AgentAddressBook } from './ports';

/** An agent an inbound address belongs to. */
export interface MailRoute {
  organizationId: string;
  agentId: string;
}

/**
 * Where inbound mail enters the service (the SMTP listener, or any relay adapter): routes recipients to
 * agents and hands each mail to its durable workflow. Nothing here decides about the sender: that happens in
 * the workflow, so the SMTP answer never tells a stranger who is a member.
 */
export class EmailIntake {
  constructor(
    private readonly agentEmails: AgentAddressBook,
    private readonly objects: Pick<ObjectStore, 'put'>,
    private readonly temporal: TemporalDeps,
    /** AGENT_EMAIL_DOMAINS: an address outside them (one saved before they were set) takes no mail. */
    private readonly agentDomains: readonly string[],
  ) {}

  /** The agent an address belongs to, or null (an address nobody holds is refused at RCPT TO). */
  async route(address: string): Promise<MailRoute | null> {
    if (!inAgentDomains(address, this.agentDomains)) return null;
    const claim = await this.agentEmails.findAgentEmailCrossOrg(address);
    if (!claim) return null;
    // agentDocId is `<organizationId>:<agentId>` (agent.schema.ts).
    const agentId = claim.agentDocId.slice(claim.organizationId.length + 1);
    return { organizationId: claim.organizationId, agentId };
  }

  /**
   * Stores the raw mail and starts its workflow, once per Message-ID and agent: a redelivery (the sending MTA
   * retrying after a lost acknowledgement, a duplicate through two relays) starts nothing new. Resolves only
   * when the mail is durable, so the listener acknowledges nothing it could lose.
   */
  async accept(route: MailRoute, raw: Uint8Array, envelopeFrom: string) {
    const messageKey = messageKeyOf(normaliseMessageId(rawHeader(raw, 'message-id')), raw);
    const workflowId = workflowIds.inboundEmail(route.organizationId, route.agentId, messageKey);
    const handle = this.temporal.client.workflow.getHandle(workflowId);
    const known = await handle.describe().then(
      () => true,
      () => false,
    );
    if (known) return { workflowId, duplicate: true };
    // The content's hash in the key: two different messages claiming one Message-ID never overwrite each other.
    const contentHash = createHash('sha256').update(raw).digest('hex').slice(0, 16);
    const objectKey = `email/${route.organizationId}/${route.agentId}/${messageKey}/${contentHash}.eml`;
    await this.objects.put(objectKey, raw, 'message/rfc822');
    const started = await startIdempotent<InboundEmailWorkflow>(this.temporal, WORKFLOWS.inboundEmail, {
      workflowId,
      // A Message-ID is answered once, even after its workflow completed.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [{ ...route, messageKey, objectKey, envelopeFrom }],
      attributes: { organizationId: route.organizationId, agentId: route.agentId },
    });
    return { workflowId, duplicate: started.alreadyStarted };
  }
}
