// TEMPORARY until the parsing module lands: the upload-url check of a file's type.
const SUPPORTED = [
  'pdf',
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'txt',
  'md',
  'csv',
  'json',
  'xml',
  'html',
  'docx',
];

/** Why this upload cannot be accepted, or null. */
export function checkUploadType(fileName: string, contentType: string): string | null {
  const ext = fileName.includes('.') ? fileName.split('.').pop()!.toLowerCase() : '';
  if (!SUPPORTED.includes(ext)) return `unsupported file type '.${ext}'; supported: .${SUPPORTED.join(' .')}`;
  if (!/^[\w.+-]+\/[\w.+-]+/.test(contentType)) return `contentType '${contentType}' is not a MIME type`;
  return null;
}
