import { pickView } from '@lib/db/view';
import { redactConfiguration } from './secrets';
import type { ToolAttachmentDoc } from './tool-attachment.schema';

/** An attachment as the API shows it: secret configuration values are write-only (see secrets.ts). */
export function toToolAttachmentView(t: ToolAttachmentDoc) {
  return {
    ...pickView(t, ['organizationId', 'agentId', 'toolCode']),
    configuration: redactConfiguration(
      t.toolCode,
      JSON.parse(t.configurationJson) as Record<string, unknown>,
    ),
    ...pickView(t, ['createdAt', 'updatedAt']),
  };
}
