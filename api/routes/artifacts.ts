import express, { Router, type Request, type RequestHandler } from 'express';
import type { ContentInput } from '@lib/artifacts/artifact-content';
import type { ArtifactScope } from '@lib/artifacts/artifact.schema';
import type { Deps } from '@lib/deps';
import { AppError } from '@lib/errors';
import { pageRequest } from '@lib/paging';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

const artifactId = (req: Request) => param(req, 'artifactId');
/** An optional JSON body (absent, or an object). */
const optionalBody = <T extends object>(req: Request): Partial<T> =>
  (req.body as Partial<T> | undefined) ?? {};

/**
 * Uploads and new versions carry the content in JSON (base64 is 4/3 of the bytes, escaped text more): their
 * body limit follows ARTIFACT_MAX_BYTES instead of the app-wide one. The content itself is checked against
 * ARTIFACT_MAX_BYTES once decoded. Mount before the app-wide parser.
 */
export function artifactBodyParser(maxBytes: number): RequestHandler {
  const limit = maxBytes * 2 + 64 * 1024;
  const parse = express.json({ limit });
  const router = Router();
  const handler: RequestHandler = (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type === 'entity.too.large') {
        const message = `the request body may be at most ${limit} bytes (an artifact version at most ${maxBytes} bytes)`;
        next(new AppError(413, 'payload_too_large', message));
        return;
      }
      next(err);
    });
  };
  router.post('/orgs/:organizationId/artifacts', handler);
  router.post('/orgs/:organizationId/artifacts/:artifactId/versions', handler);
  return router;
}

export function artifactsHandlers(deps: Deps): OperationHandlers {
  const { artifacts, appManifests, appRuntime } = deps.services;
  return {
    async listArtifacts(req, res) {
      const q = req.query as Record<string, string | boolean | undefined>;
      res.json(
        await artifacts.list(ctxOf(req), {
          scope: q.scope as ArtifactScope | undefined,
          conversationId: q.conversationId as string | undefined,
          chainRunId: q.chainRunId as string | undefined,
          pinned: q.pinned === undefined ? undefined : q.pinned === true || q.pinned === 'true',
          contentType: q.contentType as string | undefined,
          creatorUserId: q.creatorUserId as string | undefined,
          q: q.q as string | undefined,
          ...pageRequest(req.query),
        }),
      );
    },
    async createArtifact(req, res) {
      res.status(201).json(await artifacts.upload(ctxOf(req), body<ContentInput & { name: string }>(req)));
    },
    async reorderArtifactPins(req, res) {
      const { orderedArtifactIds } = body<{ orderedArtifactIds: string[] }>(req);
      res.json(await artifacts.reorderPins(ctxOf(req), orderedArtifactIds));
    },
    async getArtifact(req, res) {
      res.json(await artifacts.get(ctxOf(req), artifactId(req)));
    },
    async renameArtifact(req, res) {
      res.json(await artifacts.rename(ctxOf(req), artifactId(req), body<{ name: string }>(req).name));
    },
    async publishArtifactVersion(req, res) {
      res.status(201).json(await artifacts.publish(ctxOf(req), artifactId(req), body<ContentInput>(req)));
    },
    async pinArtifact(req, res) {
      res.json(await artifacts.pin(ctxOf(req), artifactId(req)));
    },
    async unpinArtifact(req, res) {
      res.json(await artifacts.unpin(ctxOf(req), artifactId(req)));
    },
    async shareArtifact(req, res) {
      const shares = body<{ userIds?: string[]; groupIds?: string[] }>(req);
      res.json(await artifacts.share(ctxOf(req), artifactId(req), shares));
    },
    async promoteArtifact(req, res) {
      res.json(await artifacts.promote(ctxOf(req), artifactId(req), optionalBody<{ name: string }>(req)));
    },
    async createArtifactDownloadLink(req, res) {
      const { versionId } = optionalBody<{ versionId: string }>(req);
      res.json(await artifacts.downloadLink(ctxOf(req), artifactId(req), versionId));
    },
    async sendArtifactToKnowledgeBase(req, res) {
      const target = body<{ knowledgeBaseId: string; versionId?: string; fileName?: string }>(req);
      res.status(201).json(await artifacts.sendToKnowledgeBase(ctxOf(req), artifactId(req), target));
    },
    async getAppManifest(req, res) {
      const { versionId } = req.query as { versionId?: string };
      res.json(await appManifests.get(ctxOf(req), artifactId(req), versionId));
    },
    async approveAppManifest(req, res) {
      const { versionId } = optionalBody<{ versionId: string }>(req);
      res.json(await appManifests.approve(ctxOf(req), artifactId(req), versionId));
    },
    async openApp(req, res) {
      res.status(201).json(await appRuntime.open(ctxOf(req), artifactId(req), deps.config.publicBaseUrl));
    },
  };
}
