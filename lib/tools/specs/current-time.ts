import type { ToolSpec } from '../tool-spec';

export const currentTimeTool: ToolSpec<{ timeZone: string }> = {
  toolCode: 'current_time',
  name: 'Current date and time',
  description: 'Tells the agent the current date and time, in the configured IANA time zone (default UTC).',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      timeZone: {
        type: 'string',
        format: 'time-zone',
        description: 'An IANA time zone such as Australia/Sydney',
        default: 'UTC',
      },
    },
  },
  model: { description: 'The current date and time', parameters: { type: 'object', properties: {} } },
  run: ({ config }) => {
    const now = new Date();
    return Promise.resolve({
      now: now.toISOString(),
      timeZone: config.timeZone,
      local: now.toLocaleString('en-AU', { timeZone: config.timeZone }),
    });
  },
};
