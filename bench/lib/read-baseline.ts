/**
 * The baseline for bench/api-read.ts: bare Express 5 with the MongoDB driver that mongoose bundles
 * (`mongoose.mongo.MongoClient`, its own default pool), on the same database and documents as the API.
 *
 * Per request it does the work any hand-written, correct server must do for these reads, and no more:
 *  1. auth: parse `Authorization: Bearer awk_…`, read `api_keys.findOne({ _id })` by the id the key carries,
 *     compare hashes, require `organizationId` to equal the path's, then `members.findOne({ _id: <org>:<user> })`
 *     for the key's creator and check the member's role grants the capability the route needs (org.read,
 *     users.list) — the same two primary-key lookups the API's Authenticator makes for an API key;
 *  2. GET /orgs/:org: `organizations.findOne({ _id })` mapped with the API's own toSettingsView;
 *  3. GET /orgs/:org/users: `members.find({ organizationId }).sort({ createdAt: 1, _id: 1 }).skip(0)
 *     .limit(100)` and `countDocuments({ organizationId })` in parallel, mapped with toMemberView.
 * The bench checks both servers return identical bodies before it measures anything.
 *
 * Not done here, by design (it is what the comparison prices): OpenAPI request validation, pino-http
 * request logging, mongoose query casting, RequestContext building, the error middleware, and the API's
 * `lastUsedAt` bookkeeping on the key.
 */
import express, { type Express } from 'express';
import mongoose from 'mongoose';
import { apiKeyIdOf, apiKeyMatches } from '@lib/auth/api-key-secret';
import { ROLE_CAPABILITIES, type Capability } from '@lib/auth/roles';
import type { ApiKeyDoc } from '@lib/api-keys/api-key.schema';
import type { OrganizationDoc } from '@lib/organization/organization.schema';
import { toSettingsView } from '@lib/organization/organization.service';
import type { MemberDoc } from '@lib/users/member.schema';
import { memberDocId, toMemberView } from '@lib/users/members.repository';

type Db = ReturnType<InstanceType<typeof mongoose.mongo.MongoClient>['db']>;

class HttpError extends Error {
  constructor(readonly status: number) {
    super(String(status));
  }
}

async function authorize(
  db: Db,
  authorization: string | undefined,
  organizationId: string,
  need: Capability,
) {
  const key = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (!key) throw new HttpError(401);
  const apiKeyId = apiKeyIdOf(key);
  const apiKey = apiKeyId ? await db.collection<ApiKeyDoc>('api_keys').findOne({ _id: apiKeyId }) : null;
  if (!apiKey || !apiKeyMatches(key, apiKey.keyHash) || apiKey.organizationId !== organizationId) {
    throw new HttpError(401);
  }
  const member = await db
    .collection<MemberDoc>('members')
    .findOne({ _id: memberDocId(organizationId, apiKey.creatorUserId) });
  if (!member) throw new HttpError(401);
  const capabilities = ROLE_CAPABILITIES[member.role];
  if (!capabilities.has(need)) throw new HttpError(403);
  return { capabilities };
}

export async function createBaselineApp(uri: string): Promise<{ app: Express; close: () => Promise<void> }> {
  const client = new mongoose.mongo.MongoClient(uri);
  await client.connect();
  const db = client.db();
  const app = express();
  app.disable('x-powered-by');

  app.get('/orgs/:organizationId', async (req, res) => {
    const ctx = await authorize(db, req.headers.authorization, req.params.organizationId, 'org.read');
    const org = await db
      .collection<OrganizationDoc>('organizations')
      .findOne({ _id: req.params.organizationId });
    if (!org) throw new HttpError(404);
    res.json(toSettingsView(org, ctx));
  });

  app.get('/orgs/:organizationId/users', async (req, res) => {
    const { organizationId } = req.params;
    await authorize(db, req.headers.authorization, organizationId, 'users.list');
    const members = db.collection<MemberDoc>('members');
    const [items, totalRows] = await Promise.all([
      members.find({ organizationId }).sort({ createdAt: 1, _id: 1 }).skip(0).limit(100).toArray(),
      members.countDocuments({ organizationId }),
    ]);
    res.json({ items: items.map(toMemberView), totalRows, offset: 0 });
  });

  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = err instanceof HttpError ? err.status : 500;
    res.status(status).json({ error: { code: String(status), message: 'baseline error' } });
  });
  return { app, close: () => client.close() };
}
