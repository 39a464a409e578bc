import { createHash } from 'node:crypto';
import { notFound } from '@lib/errors';
import type { Repositories } from '@lib/repositories';
import { checkName, type ContentInput } from './artifact-content';
import type { ArtifactDoc } from './artifact.schema';
import type { ArtifactVersions } from './artifact-versions';
import { currentVersion } from './views';

/** One tool call of an agent in a conversation turn: the ids that make a retried call write nothing new. */
export interface ArtifactToolCall {
  organizationId: string;
  agentId: string;
  conversationId: string;
  /** the conversation's creator: the artifact is theirs */
  userId: string;
  requestId: string;
  toolCallId: string;
}

const digest = (...parts: string[]) =>
  createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 22);

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
 * Artifacts written by agents in conversations (the `create_artifact` and `update_artifact` tools). Ids derive
 * from the turn's request and the tool call, so an activity retried after a crash finds what it wrote.
 */
export class ConversationArtifactsService {
  constructor(
    private readonly repos: Repositories,
    private readonly versions: ArtifactVersions,
  ) {}

  private async conversation(call: ArtifactToolCall) {
    const conversation = await this.repos.tenant(call.organizationId).conversations.get(call.conversationId);
    if (!conversation) throw notFound('conversation');
  }

  async create(call: ArtifactToolCall, args: ContentInput & { name: string }) {
    const name = checkName(args.name);
    const content = this.versions.decode(args);
    await this.conversation(call);
    const key = digest(call.organizationId, call.conversationId, call.requestId, call.toolCallId);
    const { doc } = await this.versions.create(
      call.organizationId,
      { artifactId: `art_${key}`, versionId: `ver_${key}` },
      {
        name,
        scope: 'conversation',
        source: 'conversation',
        conversationId: call.conversationId,
        creatorUserId: call.userId,
      },
      content,
      { createdBy: call.userId, agentId: call.agentId },
    );
    return summary(doc);
  }

  /** A new version of an artifact of this conversation (its content type stays unless given). */
  async update(
    call: ArtifactToolCall,
    args: { artifactId: string; content: string; contentType?: string; name?: string },
  ) {
    const name = args.name === undefined ? undefined : checkName(args.name);
    const artifact = await this.repos.tenant(call.organizationId).artifacts.get(args.artifactId);
    if (!artifact || artifact.conversationId !== call.conversationId)
      throw notFound('artifact of this conversation');
    const content = this.versions.decode({
      content: args.content,
      contentType: args.contentType ?? artifact.contentType,
    });
    const versionId = `ver_${digest(call.organizationId, call.conversationId, call.requestId, call.toolCallId)}`;
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
