import { notFound } from '@lib/errors';
import type { Tenants } from '@lib/db/tenants';
import { checkName, type ContentInput } from './artifact-content';
import type { ArtifactDoc } from './artifact.schema';
import type { ArtifactVersions } from './artifact-versions';
import type { ArtifactsStore } from './store';
import { currentVersion } from './views';
import { derivedId } from '@lib/ids';

/** Where an agent tool writes: the conversation of a chat turn, or the chain run of a step. */
export type ArtifactOwner =
  | { conversationId: string; chainRun?: undefined }
  | { conversationId?: undefined; chainRun: { actionChainId: string; runId: string } };

/** One tool call of an agent in a conversation turn or a chain step: the ids that make a retried call write
 * nothing new. */
export type ArtifactToolCall = ArtifactOwner & {
  organizationId: string;
  /** the agent, or `chain:<id>` for a chain step */
  agentId: string;
  /** the conversation's creator, or who started the chain run: the artifact is theirs */
  userId: string;
  requestId: string;
  toolCallId: string;
};

/** Where tool artifacts are written, as the chains and conversations features (above this one) know them. */
export interface ArtifactOwners {
  chainRuns: {
    getRun(organizationId: string, runId: string): Promise<{ _id: string; actionChainId: string } | null>;
  };
  conversations: { exists(organizationId: string, conversationId: string): Promise<boolean> };
}

/** What the model reads back from an artifact tool. */
function summary(artifact: ArtifactDoc) {
  const version = currentVersion(artifact);
  return {
    artifactId: artifact._id,
    name: artifact.name,
    versionId: version.versionId,
    version: version.version,
    contentType: version.contentType,
    sizeBytes: version.sizeBytes,
  };
}

/**
 * Artifacts written by agent tools (`create_artifact`, `update_artifact`) in conversations and chain steps, and
 * by analyses. Ids derive from the request and the tool call, so an activity retried after a crash finds what
 * it wrote. An artifact is updated only from where it was written (its conversation, or its chain run).
 */
export class ToolArtifactsService {
  constructor(
    private readonly repos: Tenants<ArtifactsStore>,
    private readonly versions: ArtifactVersions,
    private readonly owners: ArtifactOwners,
  ) {}

  /** The owner's fields of a new artifact, once the owner is known to exist. */
  private async owner(call: ArtifactToolCall) {
    if (call.chainRun) {
      const run = await this.owners.chainRuns.getRun(call.organizationId, call.chainRun.runId);
      if (!run) throw notFound('chain run');
      return {
        scope: 'chain-run' as const,
        source: 'chain-run' as const,
        conversationId: null,
        chainRunId: run._id,
        actionChainId: run.actionChainId,
      };
    }
    if (!(await this.owners.conversations.exists(call.organizationId, call.conversationId)))
      throw notFound('conversation');
    return {
      scope: 'conversation' as const,
      source: 'conversation' as const,
      conversationId: call.conversationId,
    };
  }

  private ownerKey(call: ArtifactToolCall) {
    return call.chainRun ? `run:${call.chainRun.runId}` : call.conversationId;
  }

  async create(call: ArtifactToolCall, args: ContentInput & { name: string }) {
    const name = checkName(args.name);
    const content = this.versions.decode(args);
    const owner = await this.owner(call);
    const key = [call.organizationId, this.ownerKey(call), call.requestId, call.toolCallId];
    const { doc } = await this.versions.create(
      call.organizationId,
      { artifactId: derivedId('art', key), versionId: derivedId('ver', key) },
      { name, ...owner, creatorUserId: call.userId },
      content,
      { createdBy: call.userId, agentId: call.agentId },
    );
    return summary(doc);
  }

  /** A new version of an artifact of this conversation or chain run (its content type stays unless given). */
  async update(
    call: ArtifactToolCall,
    args: { artifactId: string; content: string; contentType?: string; name?: string },
  ) {
    const name = args.name === undefined ? undefined : checkName(args.name);
    const artifact = await this.repos.tenant(call.organizationId).artifacts.get(args.artifactId);
    const mine = call.chainRun
      ? artifact?.chainRunId === call.chainRun.runId
      : artifact?.conversationId === call.conversationId;
    if (!artifact || !mine)
      throw notFound(`artifact of this ${call.chainRun ? 'chain run' : 'conversation'}`);
    const content = this.versions.decode({
      content: args.content,
      contentType: args.contentType ?? artifact.contentType,
    });
    const versionId = derivedId('ver', [
      call.organizationId,
      this.ownerKey(call),
      call.requestId,
      call.toolCallId,
    ]);
    const updated = await this.versions.append(
      call.organizationId,
      artifact._id,
      content,
      { createdBy: call.userId, agentId: call.agentId },
      { versionId, set: name ? { name, nameKey: name.toLowerCase() } : {} },
    );
    return summary(updated);
  }
}
