import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

/** How long an upload URL is valid; an upload that has not arrived 10 minutes after that ends in ERROR. */
export const UPLOAD_URL_SECONDS = 3600;
export const UPLOAD_WAIT_MS = (UPLOAD_URL_SECONDS + 600) * 1000;
/** The longest a SigV4 presigned URL may live, and what the spec asks of download links. */
export const DOWNLOAD_LINK_SECONDS = 7 * 24 * 3600;

/** A file's bytes are larger than the service accepts. */
export class ObjectTooLarge extends Error {}

/**
 * The service's bytes in S3: knowledge-base files and artifact versions. Signed URLs are made with `signer`, a client for the address clients use
 * (S3_PUBLIC_ENDPOINT), which may differ from the one the service reaches S3 at.
 */
export class ObjectStore {
  constructor(
    private readonly s3: S3Client,
    private readonly signer: S3Client,
    private readonly bucket: string,
  ) {}

  /**
   * A PUT URL bound to the content type, and to the length when the client declared it: a different
   * Content-Type or Content-Length header fails the signature.
   */
  uploadUrl(key: string, contentType: string, sizeBytes?: number) {
    const cmd = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ContentType: contentType,
      ...(sizeBytes === undefined ? {} : { ContentLength: sizeBytes }),
    });
    // Signed headers (not left as query parameters), so the store refuses any other type or length.
    return getSignedUrl(this.signer, cmd, {
      expiresIn: UPLOAD_URL_SECONDS,
      signableHeaders: new Set(
        sizeBytes === undefined ? ['content-type'] : ['content-type', 'content-length'],
      ),
    });
  }

  /** A GET URL that downloads (never displays) the object, as `fileName` and, when given, `contentType`. */
  downloadUrl(key: string, fileName: string, opts: { expiresIn?: number; contentType?: string } = {}) {
    const cmd = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition: `attachment; filename*=UTF-8''${encodeURIComponent(fileName)}`,
      ...(opts.contentType ? { ResponseContentType: opts.contentType } : {}),
    });
    return getSignedUrl(this.signer, cmd, { expiresIn: opts.expiresIn ?? DOWNLOAD_LINK_SECONDS });
  }

  /** Writes the whole object (objects the service holds in memory: artifact versions, mail and its attachments). */
  async put(key: string, bytes: Uint8Array, contentType: string) {
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: contentType }),
    );
  }

  /** The object's size, or null when it is not there (yet). */
  async size(key: string): Promise<number | null> {
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404) return null;
      throw err;
    }
  }

  /** The whole object, refusing (while streaming) more than maxBytes. */
  async read(key: string, maxBytes: number): Promise<Uint8Array> {
    const res = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    const parts: Uint8Array[] = [];
    let total = 0;
    for await (const part of res.Body as AsyncIterable<Uint8Array>) {
      total += part.length;
      if (total > maxBytes) {
        (res.Body as { destroy?: () => void }).destroy?.();
        throw new ObjectTooLarge(`the object is larger than ${maxBytes} bytes`);
      }
      parts.push(part);
    }
    return Buffer.concat(parts);
  }

  async copy(fromKey: string, toKey: string) {
    await this.s3.send(
      new CopyObjectCommand({
        Bucket: this.bucket,
        Key: toKey,
        CopySource: `${this.bucket}/${fromKey.split('/').map(encodeURIComponent).join('/')}`,
      }),
    );
  }

  /** Idempotent: removing an absent object succeeds. */
  async remove(key: string) {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}

/** Where a file's bytes live: organization, knowledge base and file, then a safe form of its name. */
export function objectKey(organizationId: string, knowledgeBaseId: string, fileId: string, fileName: string) {
  const safe = fileName.replace(/[^A-Za-z0-9._-]+/g, '_').slice(-120) || 'file';
  return `kb/${organizationId}/${knowledgeBaseId}/${fileId}/${safe}`;
}

/** Where a file's upload URL writes: apart from `key`, so no upload replaces bytes the ingestion took. */
export function uploadKeyOf(key: string) {
  return `kb-uploads/${key.replace(/^kb\//, '')}`;
}
