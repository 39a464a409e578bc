import { S3Client } from '@aws-sdk/client-s3';
import type { Config } from './config';

const CONNECT_TIMEOUT_MS = 5000;

export function createS3Client(s3: Config['s3']): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: s3.forcePathStyle,
    credentials:
      s3.accessKeyId && s3.secretAccessKey
        ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }
        : undefined,
    // Presigned PUTs from browsers and S3-compatible stores break with the SDK's default checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // A store that stops answering fails the request (a 503 from the API, a retried activity in the worker)
    // instead of holding it: a deadline to connect, then one on silence (a large object may take long, but
    // never stands still that long). The SDK's defaults wait for ever.
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: s3.requestTimeoutMs },
  });
}
