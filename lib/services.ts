import type { CredentialCache } from '@lib/auth/credential-cache';
import { Admission } from '@lib/admission/admission';
import { AgentAccess } from '@lib/agents/agent-access';
import { AgentLinksService } from '@lib/agents/agent-links.service';
import { AgentsService } from '@lib/agents/agents.service';
import { ApiKeysService } from '@lib/api-keys/api-keys.service';
import { AssumeRoleService } from '@lib/assume-role/assume-role.service';
import { AppManifestsService } from '@lib/artifacts/app-manifests.service';
import { AppRuntimeService } from '@lib/artifacts/app-runtime.service';
import { ArtifactAccess } from '@lib/artifacts/artifact-access';
import { ArtifactVersions } from '@lib/artifacts/artifact-versions';
import { ArtifactsService } from '@lib/artifacts/artifacts.service';
import { ToolArtifactsService } from '@lib/artifacts/tool-artifacts.service';
import type { WorkflowCatalog } from '@lib/artifacts/workflow-catalog';
import type { TokenService } from '@lib/auth/tokens';
import type { Config } from '@lib/config';
import { ConversationsService } from '@lib/conversations/conversations.service';
import { GroupAgentsService } from '@lib/groups/group-agents.service';
import type { OutboundClient } from '@lib/http/outbound';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import { GroupsService } from '@lib/groups/groups.service';
import { OrganizationService } from '@lib/organization/organization.service';
import type { Repositories } from '@lib/repositories';
import { TablesService } from '@lib/tables/tables.service';
import type { TemporalDeps } from '@lib/temporal/client';
import { AgentToolsService } from '@lib/tools/agent-tools.service';
import { ModelTools } from '@lib/tools/model-tools';
import { UsersService } from '@lib/users/users.service';
import type { Embedders } from '@lib/embeddings/embedders';
import { AgentKnowledgeBasesService } from '@lib/knowledge-bases/agent-kb.service';
import { EtlRulesService } from '@lib/knowledge-bases/etl-rules.service';
import { KbAccess } from '@lib/knowledge-bases/kb-access';
import { KbFilesService } from '@lib/knowledge-bases/kb-files.service';
import { KbSearchService } from '@lib/knowledge-bases/kb-search.service';
import { KnowledgeBasesService } from '@lib/knowledge-bases/knowledge-bases.service';
import type { ObjectStore } from '@lib/knowledge-bases/object-store';
import type { VectorStore } from '@lib/vectors/vector-store';
import { TaskPlansService } from '@lib/task-plans/task-plans.service';
import { AnalysesService } from '@lib/analyses/analyses.service';
import { agentMail } from '@lib/email-agents/agent-mail';
import { BrowserSessionsService, endSessionsOf } from '@lib/browser-sessions/browser-sessions.service';
import { ChainAttachmentsService } from '@lib/chains/chain-attachments.service';
import { ChainRunsService } from '@lib/chains/chain-runs.service';
import { ChainsService } from '@lib/chains/chains.service';
import { ChainWorkflowCatalog } from '@lib/chains/workflow-catalog';
import type OpenAI from 'openai';
import { StepFromPromptService } from '@lib/chains/step-from-prompt.service';
import { CreditsService } from '@lib/credits/credits.service';
import type { Metrics } from '@lib/observability/metrics';
import type { Logger } from '@lib/logger';
import { ScheduleHandlersService } from '@lib/schedules/schedule-handlers.service';
import { ScheduleSync } from '@lib/schedules/schedule-sync';
import { SchedulesService } from '@lib/schedules/schedules.service';
import { HandlerRunsService } from '@lib/triggers/handler-runs.service';
import { HandlerTargets } from '@lib/triggers/handler-targets';
import { WebhookRateLimiter } from '@lib/webhooks/rate-limit';
import { WebhookDeliveriesService } from '@lib/webhooks/webhook-deliveries.service';
import { WebhookHandlersService } from '@lib/webhooks/webhook-handlers.service';
import { WebhooksService } from '@lib/webhooks/webhooks.service';
import type { Redis } from 'ioredis';

export interface ServiceDeps {
  repos: Repositories;
  temporal: TemporalDeps;
  tokens: TokenService;
  outbound: OutboundClient;
  realtime: RealtimeEmitter;
  config: Pick<
    Config,
    | 'tableQueryTimeoutMs'
    | 'tablePageMaxBytes'
    | 'credits'
    | 'chainGeneration'
    | 'chains'
    | 'artifacts'
    | 'webhooks'
    | 'publicBaseUrl'
    | 'browser'
    | 'agentEmailDomains'
    | 'kb'
    | 'admission'
  >;
  objects: ObjectStore;
  embedders: Embedders;
  vectors: VectorStore;
  llm: OpenAI;
  logger: Logger;
  redis: Redis;
  metrics?: Metrics;
  /** Documents that authenticate requests, kept while every change to them is heard (a webhook's settings). */
  credentials?: Pick<CredentialCache, 'read'>;
  /** The organization's workflows as apps see them; by default its action chains (tests give a stand-in). */
  workflows?: WorkflowCatalog;
}

/** One instance of every feature service, wired once per process. */
export function createServices(deps: ServiceDeps) {
  const { repos, temporal, tokens, outbound, realtime, config } = deps;
  // Organization, users and groups sit below agents, and chains above them all: what a lower feature needs of
  // a higher one is a narrow port, and the closures below reach services built further down.
  const organization = new OrganizationService(repos);
  const users = new UsersService(repos, temporal, realtime, organization, {
    reassign: (organizationId, fromUserId, toUserId) => chains.reassign(organizationId, fromUserId, toUserId),
  });
  const groups = new GroupsService(repos, realtime, users, organization);
  const groupAgents = new GroupAgentsService(repos, {
    getMany: (organizationId, agentIds) => agents.getMany(organizationId, agentIds),
    findOrMaterialise: (organizationId, agentId) => agents.findOrMaterialise(organizationId, agentId),
  });
  const access = new AgentAccess(repos, { users, groups, groupAgents, organizations: organization });
  const agents: AgentsService = new AgentsService(repos, access, config.agentEmailDomains, {
    // Each owner removes its own records of a deleted agent.
    dependents: [
      { removeForAgent: (organizationId, agentId) => agentTools.removeForAgent(organizationId, agentId) },
      groupAgents,
      {
        removeForAgent: (organizationId, agentId) =>
          agentKnowledgeBases.removeForAgent(organizationId, agentId),
      },
      agentMail(repos),
      {
        removeForAgent: (organizationId, agentId) => chainAttachments.removeForAgent(organizationId, agentId),
      },
    ],
    organizations: organization,
    knowledgeBases: { find: (organizationId, id) => knowledgeBases.find(organizationId, id) },
    accounts: users,
  });
  const agentLinks = new AgentLinksService(repos, agents);
  const agentTools = new AgentToolsService(repos, agents);
  const kbAccess = new KbAccess(repos, access);
  const agentKnowledgeBases = new AgentKnowledgeBasesService(repos, agents, kbAccess);
  const modelTools = new ModelTools(repos, {
    agentLinks,
    knowledgeBases: agentKnowledgeBases,
    chains: {
      chainIdsOfAgent: (organizationId, agentId) => chainAttachments.chainIdsOfAgent(organizationId, agentId),
      getMany: (organizationId, ids) => chains.getMany(organizationId, ids),
      storedSteps: (organizationId, id) => chains.storedSteps(organizationId, id),
    },
  });
  const admission = new Admission(
    deps.redis,
    organization,
    config.admission,
    deps.logger.child({ feature: 'admission' }),
    deps.metrics,
  );
  // Conversations sit above the tools and browser sessions below them: they meet through narrow ports, wired here.
  // Task plans and analyses are built on conversations: the closures reach them once all exist.
  const conversations: ConversationsService = new ConversationsService(
    repos,
    temporal,
    access,
    outbound,
    admission,
    {
      agents,
      modelTools,
      dependents: [
        {
          removeForConversation: (organizationId, id) => taskPlans.removeForConversation(organizationId, id),
        },
        { removeForConversation: (organizationId, id) => analyses.removeForConversation(organizationId, id) },
      ],
      browserSessions: {
        endFor: (organizationId, owner) => endSessionsOf(repos, temporal, organizationId, owner),
      },
    },
  );
  const taskPlans = new TaskPlansService(repos, conversations, temporal, realtime);
  const analyses = new AnalysesService(repos, conversations, agents, temporal, admission);
  const chains = new ChainsService(repos, config.chains.schemaMaxNodes);
  const chainRuns = new ChainRunsService(repos, temporal, chains, admission, config.chains.fanOutMax);
  const workflows = deps.workflows ?? new ChainWorkflowCatalog(repos, chainRuns);
  const chainAttachments = new ChainAttachmentsService(repos, chains, agents, kbAccess);
  const knowledgeBases = new KnowledgeBasesService(
    repos,
    kbAccess,
    agents,
    organization,
    users,
    temporal,
    deps.embedders.defaultEmbedder.model,
  );
  const credits = new CreditsService(repos, config.credits, organization, deps.metrics);
  const tables = new TablesService(repos, config.tableQueryTimeoutMs, config.tablePageMaxBytes);
  const kbFiles = new KbFilesService(
    repos,
    kbAccess,
    temporal,
    deps.objects,
    admission,
    config.kb.maxFileBytes,
  );
  const artifactAccess = new ArtifactAccess(repos, access);
  const versions = new ArtifactVersions(repos, deps.objects, config.artifacts.maxBytes);
  const appManifests = new AppManifestsService(repos, artifactAccess, versions, workflows, tables);
  const targets = new HandlerTargets(agents, chains, access);
  const handlerRuns = new HandlerRunsService(repos, { chainRuns, conversations });
  const scheduleSync = new ScheduleSync(
    repos,
    handlerRuns,
    temporal,
    deps.logger.child({ feature: 'schedules' }),
  );
  const schedules = new SchedulesService(repos, scheduleSync, handlerRuns);
  const webhooks = new WebhooksService(repos, handlerRuns, config.publicBaseUrl);
  const webhookLogger = deps.logger.child({ feature: 'webhooks' });
  return {
    admission,
    organization,
    users,
    groups,
    groupAgents,
    apiKeys: new ApiKeysService(repos, realtime),
    assumeRole: new AssumeRoleService(users, tokens),
    access,
    agents,
    agentLinks,
    agentTools,
    modelTools,
    conversations,
    taskPlans,
    analyses,
    browserSessions: new BrowserSessionsService(
      repos,
      conversations,
      chainRuns,
      temporal,
      deps.objects,
      config.browser,
    ),
    tables,
    knowledgeBases,
    kbFiles,
    kbSearch: new KbSearchService(repos, kbAccess, deps.embedders, deps.vectors),
    etlRules: new EtlRulesService(repos, kbAccess, access, chains),
    agentKnowledgeBases,
    chains,
    chainRuns,
    workflows,
    chainAttachments,
    credits,
    stepFromPrompt: new StepFromPromptService(deps.llm, credits, config.chainGeneration, deps.logger),
    artifacts: new ArtifactsService(repos, artifactAccess, versions, deps.objects, kbFiles, {
      member: (organizationId, userId) => users.member(organizationId, userId),
      groupExists: (organizationId, groupId) => groups.exists(organizationId, groupId),
    }),
    toolArtifacts: new ToolArtifactsService(repos, versions, { chainRuns, conversations }),
    appManifests,
    appRuntime: new AppRuntimeService(
      repos,
      users,
      artifactAccess,
      versions,
      tables,
      workflows,
      tokens,
      config.artifacts,
    ),
    scheduleSync,
    schedules,
    scheduleHandlers: new ScheduleHandlersService(repos, schedules, targets),
    webhooks,
    webhookHandlers: new WebhookHandlersService(repos, webhooks, targets),
    webhookDeliveries: new WebhookDeliveriesService(
      repos,
      temporal,
      new WebhookRateLimiter(deps.redis, webhookLogger),
      admission,
      config.webhooks,
      webhookLogger,
      deps.credentials,
    ),
  };
}

export type Services = ReturnType<typeof createServices>;
