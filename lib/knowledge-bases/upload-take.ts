import type { KbFileDoc } from './kb-file.schema';
import type { ObjectStore } from './object-store';

/**
 * The ingestion takes an upload: the bytes the upload URL wrote (at `uploadKey`) move to the file's own `key`,
 * which only the service writes, and everything later reads (parse, download links, copies, reindex) reads
 * there. A PUT to the URL while the file is not READY yet replaces the bytes at the next take (a re-upload
 * after an ERROR, then a reindex); once the file is READY its `uploadKey` is gone and nothing an upload URL
 * writes is ever taken again (docs/knowledge-bases.md).
 *
 * Bytes over `maxBytes` are deleted here, before anything reads them; the size is still returned so the file
 * ends in ERROR naming the limit. Returns null while no bytes have arrived.
 */
export async function takeUpload(
  objects: ObjectStore,
  file: Pick<KbFileDoc, 'key' | 'uploadKey'>,
  maxBytes: number,
): Promise<number | null> {
  const uploaded = file.uploadKey ? await objects.size(file.uploadKey) : null;
  if (uploaded !== null && uploaded > maxBytes) {
    // never copied: a copy of gigabytes would outlast the activity
    await objects.remove(file.uploadKey!);
    return uploaded;
  }
  if (uploaded !== null) {
    await objects.copy(file.uploadKey!, file.key);
    await objects.remove(file.uploadKey!);
  }
  // What was kept (not what the upload first looked like: a PUT may have landed between the two reads).
  const size = await objects.size(file.key);
  if (size !== null && size > maxBytes) await objects.remove(file.key);
  return size;
}
