import type { SearchAttributePair } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';

/**
 * The custom search attributes every workflow of the service carries (all Keyword), so an operator can list one
 * organization's runs — or one agent's, chain's, knowledge base's or trigger's — in the Temporal UI or CLI:
 * `OrganizationId = "org_…"`. They must be registered on the namespace (docs/operations.md "Search attributes"); the local
 * stack registers them when it starts the dev server.
 */
const keyword = (name: string): SearchAttributeKey<'KEYWORD'> => ({ name, type: 'KEYWORD' });

export const SEARCH_ATTRIBUTE_KEYS = {
  organizationId: keyword('OrganizationId'),
  agentId: keyword('AgentId'),
  actionChainId: keyword('ActionChainId'),
  knowledgeBaseId: keyword('KnowledgeBaseId'),
  triggerId: keyword('TriggerId'),
} as const;

/** What a run belongs to: always an organization, and the agent, chain, knowledge base or trigger where one applies. */
export interface RunAttributes {
  organizationId: string;
  agentId?: string;
  actionChainId?: string;
  knowledgeBaseId?: string;
  triggerId?: string;
}

/** The typed search attributes of a run (absent and empty ids are left out). */
export function searchAttributePairs(attributes: Partial<RunAttributes>): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [];
  for (const [field, key] of Object.entries(SEARCH_ATTRIBUTE_KEYS)) {
    const value = attributes[field as keyof RunAttributes];
    if (value) pairs.push({ key, value });
  }
  return pairs;
}
