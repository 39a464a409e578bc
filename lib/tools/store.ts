import type { ToolAttachmentsRepository } from './tool-attachments.repository';

/** The tools feature's own collection (registry tools attached to agents), for one organization. */
export interface ToolsStore {
  toolAttachments: ToolAttachmentsRepository;
}
