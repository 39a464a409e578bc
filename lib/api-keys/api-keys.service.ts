import { requireUserSession } from '@lib/auth/authenticator';
import { generateApiKey } from '@lib/auth/api-key-secret';
import type { RequestContext } from '@lib/auth/context';
import { notFound } from '@lib/errors';
import { page, type PageRequest } from '@lib/paging';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import { rooms } from '@lib/realtime/rooms';
import type { Tenants } from '@lib/db/tenants';
import type { PermissionMap } from './api-key.schema';
import { toApiKeyView } from './api-keys.repository';
import type { ApiKeysStore } from './store';

export interface ApiKeyBody {
  description?: string;
  permissions?: PermissionMap;
}

export class ApiKeysService {
  constructor(
    private readonly repos: Tenants<ApiKeysStore>,
    private readonly realtime: Pick<RealtimeEmitter, 'disconnect'>,
  ) {}

  /** Sockets that authenticated with a key lose it (revoked) or get new rights (changed): they reconnect. */
  private disconnect(ctx: RequestContext, id: string) {
    this.realtime.disconnect([rooms.apiKey(ctx.organizationId, id)]);
  }

  private repo(ctx: RequestContext) {
    requireUserSession(ctx);
    return this.repos.tenant(ctx.organizationId).apiKeys;
  }

  /** The key value is in this response only; the store keeps its hash. */
  async create(ctx: RequestContext, body: ApiKeyBody) {
    requireUserSession(ctx);
    return this.issue(ctx.organizationId, {
      description: body.description ?? '',
      permissions: body.permissions ?? {},
      creatorUserId: ctx.userId,
    });
  }

  async list(ctx: RequestContext, opts: PageRequest) {
    const { items, total } = await this.repo(ctx).list(opts);
    return page(items.map(toApiKeyView), total, opts.offset);
  }

  async get(ctx: RequestContext, id: string) {
    const record = await this.repo(ctx).get(id);
    if (!record) throw notFound('API key');
    return toApiKeyView(record);
  }

  async update(ctx: RequestContext, id: string, body: ApiKeyBody) {
    const record = await this.repo(ctx).update(id, body);
    if (!record) throw notFound('API key');
    this.disconnect(ctx, id);
    return toApiKeyView(record);
  }

  async remove(ctx: RequestContext, id: string) {
    if (!(await this.repo(ctx).remove(id))) throw notFound('API key');
    this.disconnect(ctx, id);
    return { message: 'API key deleted', apiKeyId: id };
  }

  /** A new key acting for `creatorUserId`; also an organization's first key (lib/organization/bootstrap.service.ts). */
  async issue(
    organizationId: string,
    fields: { description: string; permissions: PermissionMap; creatorUserId: string },
  ) {
    const { apiKeyId, key, keyHash, keyPrefix } = generateApiKey();
    const record = await this.repos
      .tenant(organizationId)
      .apiKeys.create({ _id: apiKeyId, ...fields, keyHash, keyPrefix });
    return { ...toApiKeyView(record), key };
  }

  /** Records when a key was last used (lib/auth/authenticator.ts). */
  touch(organizationId: string, apiKeyId: string, at: Date): Promise<unknown> {
    return this.repos.tenant(organizationId).apiKeys.touch(apiKeyId, at);
  }
}
