/*
 * Analyses: a question (title + description) an agent works through with the organization's tables and
 * knowledge bases, as a durable workflow (docs/agents.md "Analyses").
 *
 * Status of an analysis (of its current run):
 *   queued     created, or re-run (PUT with a changed question, or `rerun: true`); its workflow is started
 *   running    the workflow has begun (startedAt)
 *   completed  the agent answered: result and artifact stored (completedAt)
 *   failed     the model, a needed record or the credits failed it: error says why (completedAt)
 *   cancelled  its workflow was cancelled outside the API (an operator; completedAt)
 * Any status → queued on a re-run (the next generation; the run under way is cancelled). DELETE cancels the
 * run under way and removes the analysis.
 */

export const ANALYSIS_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type AnalysisStatus = (typeof ANALYSIS_STATUSES)[number];
/** A run in one of these may still write: a DELETE or re-run cancels its workflow. */
export const ACTIVE_STATUSES: readonly AnalysisStatus[] = ['queued', 'running'];

/** Model rounds with tools before the model must answer without them. */
export const ANALYSIS_TOOL_ROUNDS = 8;
/** Rows one query_table call returns at most (the model asks for fewer). */
export const MAX_QUERY_ROWS = 100;
/** Tables list_tables shows at most. */
export const MAX_TABLES_LISTED = 100;

/** What the agent is told to do, after its own instructions. */
export function analysisPrompt(agentInstructions: string) {
  return (
    `${agentInstructions}\n\n` +
    'You are doing a data analysis for a member of the organization. Work through the question with the ' +
    'tools: list_tables shows the organization tables and their fields, query_table reads rows, and ' +
    'search_knowledge_bases (when offered) finds passages in knowledge bases. Base every figure on what the ' +
    'tools returned. Answer with a complete report in Markdown: a short answer first, then the findings and ' +
    'how you reached them, citing tables and passages.'
  );
}

export function questionOf(analysis: { title: string; description: string }) {
  return analysis.description ? `# ${analysis.title}\n\n${analysis.description}` : `# ${analysis.title}`;
}

/** What the result artifact is called (artifact names are at most 500 characters). */
export function artifactNameOf(title: string) {
  const name = `Analysis: ${title}`;
  return name.length <= 500 ? name : `${name.slice(0, 499)}…`;
}

/** Words only: case, Markdown marks, punctuation and spacing set aside. */
const wordsOf = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/**
 * Whether an answer only repeats the question (its title, or title and description), as a small model does when
 * it has nothing to say: that is no result, and the run fails saying so.
 */
export function onlyRepeatsQuestion(answer: string, analysis: { title: string; description: string }) {
  const said = wordsOf(answer);
  return said === wordsOf(analysis.title) || said === wordsOf(questionOf(analysis));
}
