import { pickView } from '@lib/db/view';
import type { ToolAttachmentDoc } from './tool-attachment.schema';

export function toToolAttachmentView(t: ToolAttachmentDoc) {
  return {
    ...pickView(t, ['organizationId', 'agentId', 'toolCode']),
    configuration: JSON.parse(t.configurationJson) as Record<string, unknown>,
    ...pickView(t, ['createdAt', 'updatedAt']),
  };
}
