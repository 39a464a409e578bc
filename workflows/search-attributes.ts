import { workflowInfo } from '@temporalio/workflow';
import { searchAttributePairs, type RunAttributes } from '@contracts';

/**
 * A child workflow's search attributes: its parent's (organization, agent, trigger…), with `set` added or
 * replaced. They ride on the existing start-child command, so histories recorded before replay unchanged.
 */
export function childSearchAttributes(set: Partial<RunAttributes> = {}) {
  return workflowInfo().typedSearchAttributes.updateCopy(searchAttributePairs(set));
}
