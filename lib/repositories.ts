import { AgentLinksRepository } from '@lib/agents/agent-links.repository';
import { agentEmailModel } from '@lib/agents/agent-email.schema';
import { agentLinkModel } from '@lib/agents/agent-link.schema';
import { agentModel } from '@lib/agents/agent.schema';
import { AgentsRepository } from '@lib/agents/agents.repository';
import { apiKeyModel } from '@lib/api-keys/api-key.schema';
import { ApiKeysRepository } from '@lib/api-keys/api-keys.repository';
import { conversationModel } from '@lib/conversations/conversation.schema';
import { ConversationsRepository } from '@lib/conversations/conversations.repository';
import { messageModel } from '@lib/conversations/message.schema';
import type { Database, ModelDef } from '@lib/db/connection';
import { AgentEmailsCrossOrg } from '@lib/agents/agent-emails.repository';
import { ApiKeysCrossOrg } from '@lib/api-keys/api-key-records.repository';
import { KnowledgeBasesCrossOrg } from '@lib/knowledge-bases/public-knowledge-bases.repository';
import { OrganizationsCrossOrg } from '@lib/organization/organizations.repository';
import { SchedulesCrossOrg } from '@lib/schedules/schedule-sweep.repository';
import { groupAgentMappingModel } from '@lib/groups/group-agent-mapping.schema';
import { GroupAgentsRepository } from '@lib/groups/group-agents.repository';
import { GroupsRepository } from '@lib/groups/groups.repository';
import { userGroupModel } from '@lib/groups/user-group.schema';
import { OrganizationRepository } from '@lib/organization/organization.repository';
import { organizationModel } from '@lib/organization/organization.schema';
import { customTableModel, type CustomTableDoc } from '@lib/tables/custom-table.schema';
import { TableRowsRepository } from '@lib/tables/table-rows.repository';
import { tableRowCounterModel } from '@lib/tables/table-row-counter.schema';
import { TablesRepository } from '@lib/tables/tables.repository';
import { toolAttachmentModel } from '@lib/tools/tool-attachment.schema';
import { ToolAttachmentsRepository } from '@lib/tools/tool-attachments.repository';
import { memberModel } from '@lib/users/member.schema';
import type { CredentialsChanged } from '@lib/db/tenant-repository';
import { MembersRepository } from '@lib/users/members.repository';
import { UserAccountsRepository } from '@lib/users/user-accounts.repository';
import { userModel } from '@lib/users/user.schema';
import { chainModel, stepModel } from '@lib/chains/chain.schema';
import { chainRunModel, fanOutResultModel } from '@lib/chains/chain-run.schema';
import { ChainRunsRepository } from '@lib/chains/chain-runs.repository';
import { ChainsRepository } from '@lib/chains/chains.repository';
import { agentChainModel, stepAttachmentModel } from '@lib/chains/step-attachment.schema';
import { ChainAttachmentsRepository } from '@lib/chains/step-attachments.repository';
import { appApprovalModel } from '@lib/artifacts/app-approval.schema';
import { AppApprovalsRepository } from '@lib/artifacts/app-approvals.repository';
import { artifactModel } from '@lib/artifacts/artifact.schema';
import { ArtifactsRepository } from '@lib/artifacts/artifacts.repository';
import { agentKbAttachmentModel } from '@lib/knowledge-bases/agent-kb-attachment.schema';
import { AgentKbAttachmentsRepository } from '@lib/knowledge-bases/agent-kb-attachments.repository';
import { etlRuleModel } from '@lib/knowledge-bases/etl-rule.schema';
import { EtlRulesRepository } from '@lib/knowledge-bases/etl-rules.repository';
import { kbChunkModel } from '@lib/knowledge-bases/kb-chunk.schema';
import { KbChunksRepository } from '@lib/knowledge-bases/kb-chunks.repository';
import { kbFileModel } from '@lib/knowledge-bases/kb-file.schema';
import { KbFilesRepository } from '@lib/knowledge-bases/kb-files.repository';
import { knowledgeBaseModel } from '@lib/knowledge-bases/knowledge-base.schema';
import { KnowledgeBasesRepository } from '@lib/knowledge-bases/knowledge-bases.repository';
import { taskPlanModel } from '@lib/task-plans/task-plan.schema';
import { emailMessageModel } from '@lib/email-agents/email-message.schema';
import { EmailMessagesRepository } from '@lib/email-agents/email-messages.repository';
import { TaskPlansRepository } from '@lib/task-plans/task-plans.repository';
import { analysisModel } from '@lib/analyses/analysis.schema';
import { AnalysesRepository } from '@lib/analyses/analyses.repository';
import { BrowserSessionsRepository } from '@lib/browser-sessions/browser-sessions.repository';
import { browserSessionModel, browserSlotModel } from '@lib/browser-sessions/browser-session.schema';
import { creditAccountModel } from '@lib/credits/credit-account.schema';
import { CreditAccountRepository } from '@lib/credits/credit-accounts.repository';
import { creditGrantModel } from '@lib/credits/credit-grant.schema';
import { CreditGrantsRepository } from '@lib/credits/credit-grants.repository';
import { llmUsageModel } from '@lib/credits/llm-usage.schema';
import { LlmUsageRepository } from '@lib/credits/llm-usage.repository';
import { scheduleHandlerModel } from '@lib/schedules/schedule-handler.schema';
import { ScheduleHandlersRepository } from '@lib/schedules/schedule-handlers.repository';
import { scheduleTriggerModel } from '@lib/schedules/schedule-trigger.schema';
import { ScheduleTriggersRepository } from '@lib/schedules/schedule-triggers.repository';
import { handlerRunModel } from '@lib/triggers/handler-run.schema';
import { HandlerRunsRepository } from '@lib/triggers/handler-runs.repository';
import { webhookDeliveryModel, webhookHandlerModel, webhookModel } from '@lib/webhooks/webhook.schema';
import { WebhooksRepository } from '@lib/webhooks/webhooks.repository';

import type { AgentsStore } from '@lib/agents/store';
import type { AnalysesStore } from '@lib/analyses/store';
import type { ApiKeysStore } from '@lib/api-keys/store';
import type { ArtifactsStore } from '@lib/artifacts/store';
import type { BrowserSessionsStore } from '@lib/browser-sessions/store';
import type { ChainsStore } from '@lib/chains/store';
import type { ConversationsStore } from '@lib/conversations/store';
import type { CreditsStore } from '@lib/credits/store';
import type { EmailAgentsStore } from '@lib/email-agents/store';
import type { GroupsStore } from '@lib/groups/store';
import type { KnowledgeBasesStore } from '@lib/knowledge-bases/store';
import type { OrganizationStore } from '@lib/organization/store';
import type { SchedulesStore } from '@lib/schedules/store';
import type { TablesStore } from '@lib/tables/store';
import type { TaskPlansStore } from '@lib/task-plans/store';
import type { ToolsStore } from '@lib/tools/store';
import type { TriggersStore } from '@lib/triggers/store';
import type { UsersStore } from '@lib/users/store';
import type { WebhooksStore } from '@lib/webhooks/store';

/** Every collection with a schema; their indexes are built at connect. */
export const MODELS: readonly ModelDef[] = [
  organizationModel,
  userModel,
  memberModel,
  userGroupModel,
  apiKeyModel,
  conversationModel,
  messageModel,
  customTableModel,
  tableRowCounterModel,
  agentModel,
  toolAttachmentModel,
  agentLinkModel,
  groupAgentMappingModel,
  agentEmailModel,
  knowledgeBaseModel,
  kbFileModel,
  kbChunkModel,
  etlRuleModel,
  agentKbAttachmentModel,
  taskPlanModel,
  analysisModel,
  browserSessionModel,
  browserSlotModel,
  emailMessageModel,
  chainModel,
  stepModel,
  stepAttachmentModel,
  agentChainModel,
  chainRunModel,
  fanOutResultModel,
  creditAccountModel,
  creditGrantModel,
  llmUsageModel,
  artifactModel,
  appApprovalModel,
  scheduleTriggerModel,
  scheduleHandlerModel,
  handlerRunModel,
  webhookModel,
  webhookHandlerModel,
  webhookDeliveryModel,
] as readonly ModelDef[];

/**
 * The repositories of one organization: every feature's store (its own collections), which lib/services.ts hands
 * each feature alone. `implements` checks here that the one object holds every store as its feature names it.
 */
export class TenantRepositories
  implements
    AgentsStore,
    AnalysesStore,
    ApiKeysStore,
    ArtifactsStore,
    BrowserSessionsStore,
    ChainsStore,
    ConversationsStore,
    CreditsStore,
    EmailAgentsStore,
    GroupsStore,
    KnowledgeBasesStore,
    OrganizationStore,
    SchedulesStore,
    TablesStore,
    TaskPlansStore,
    ToolsStore,
    TriggersStore,
    UsersStore,
    WebhooksStore
{
  constructor(
    private readonly db: Database,
    readonly organizationId: string,
    private readonly credentialsChanged: CredentialsChanged,
  ) {}

  get organization() {
    return new OrganizationRepository(this.db, this.organizationId);
  }
  get members() {
    return new MembersRepository(this.db, this.organizationId, this.credentialsChanged);
  }
  get groups() {
    return new GroupsRepository(this.db, this.organizationId);
  }
  get groupAgents() {
    return new GroupAgentsRepository(this.db, this.organizationId);
  }
  get apiKeys() {
    return new ApiKeysRepository(this.db, this.organizationId, this.credentialsChanged);
  }
  get agents() {
    return new AgentsRepository(this.db, this.organizationId);
  }
  get agentLinks() {
    return new AgentLinksRepository(this.db, this.organizationId);
  }
  get toolAttachments() {
    return new ToolAttachmentsRepository(this.db, this.organizationId);
  }
  get conversations() {
    return new ConversationsRepository(this.db, this.organizationId);
  }
  get tables() {
    return new TablesRepository(this.db, this.organizationId);
  }
  get knowledgeBases() {
    return new KnowledgeBasesRepository(this.db, this.organizationId);
  }
  get kbFiles() {
    return new KbFilesRepository(this.db, this.organizationId);
  }
  get kbChunks() {
    return new KbChunksRepository(this.db, this.organizationId);
  }
  get etlRules() {
    return new EtlRulesRepository(this.db, this.organizationId);
  }
  get agentKnowledgeBases() {
    return new AgentKbAttachmentsRepository(this.db, this.organizationId);
  }
  get emailMessages() {
    return new EmailMessagesRepository(this.db, this.organizationId);
  }
  get taskPlans() {
    return new TaskPlansRepository(this.db, this.organizationId);
  }
  get analyses() {
    return new AnalysesRepository(this.db, this.organizationId);
  }
  get browserSessions() {
    return new BrowserSessionsRepository(this.db, this.organizationId);
  }
  get chains() {
    return new ChainsRepository(this.db, this.organizationId);
  }
  get chainAttachments() {
    return new ChainAttachmentsRepository(this.db, this.organizationId);
  }
  get chainRuns() {
    return new ChainRunsRepository(this.db, this.organizationId);
  }
  get creditAccount() {
    return new CreditAccountRepository(this.db, this.organizationId);
  }
  get creditGrants() {
    return new CreditGrantsRepository(this.db, this.organizationId);
  }
  get llmUsage() {
    return new LlmUsageRepository(this.db, this.organizationId);
  }
  get artifacts() {
    return new ArtifactsRepository(this.db, this.organizationId);
  }
  get appApprovals() {
    return new AppApprovalsRepository(this.db, this.organizationId);
  }
  get scheduleTriggers() {
    return new ScheduleTriggersRepository(this.db, this.organizationId);
  }
  get scheduleHandlers() {
    return new ScheduleHandlersRepository(this.db, this.organizationId);
  }
  get handlerRuns() {
    return new HandlerRunsRepository(this.db, this.organizationId);
  }
  get webhooks() {
    return new WebhooksRepository(this.db, this.organizationId, this.credentialsChanged);
  }
  /** Rows of a table that was loaded through `tables` (so it belongs to this organization). */
  tableRows(table: Pick<CustomTableDoc, '_id'>) {
    return new TableRowsRepository(this.db, table);
  }
}

/** Entry point to storage for services and activities: `tenant(organizationId)` scopes everything. */
export class Repositories {
  /** Accounts are global identities, not organization data. */
  readonly accounts: UserAccountsRepository;
  // The only reads and writes not scoped to one organization, each owned by its feature and named for why.
  readonly agentEmails: AgentEmailsCrossOrg;
  readonly apiKeyRecords: ApiKeysCrossOrg;
  readonly organizations: OrganizationsCrossOrg;
  readonly publicKnowledgeBases: KnowledgeBasesCrossOrg;
  readonly scheduleSweep: SchedulesCrossOrg;

  /**
   * `credentialsChanged` is told after every write to an organization's API keys or memberships, which
   * authentication may have cached (lib/auth/credential-cache.ts).
   */
  constructor(
    private readonly db: Database,
    private readonly credentialsChanged: CredentialsChanged,
  ) {
    this.agentEmails = new AgentEmailsCrossOrg(db);
    this.accounts = new UserAccountsRepository(db, this.agentEmails);
    this.apiKeyRecords = new ApiKeysCrossOrg(db);
    this.organizations = new OrganizationsCrossOrg(db);
    this.publicKnowledgeBases = new KnowledgeBasesCrossOrg(db);
    this.scheduleSweep = new SchedulesCrossOrg(db);
  }

  tenant(organizationId: string): TenantRepositories {
    return new TenantRepositories(this.db, organizationId, this.credentialsChanged);
  }
}
