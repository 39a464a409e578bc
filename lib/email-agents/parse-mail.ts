import { simpleParser, type AddressObject } from 'mailparser';
import { htmlToText } from '@lib/knowledge-bases/parsing/documents';
import { messageIdList, normaliseMessageId } from './mime';

export interface MailAttachment {
  fileName: string;
  contentType: string;
  content: Buffer;
}

/** What the service reads of an inbound message. */
export interface InboundMail {
  messageId: string | null;
  inReplyTo: string | undefined;
  /** Message-IDs of References, oldest first */
  references: string[];
  /** the first From address, lower-cased */
  fromAddress: string | null;
  /** how many addresses From names (one, in mail a person writes) */
  fromCount: number;
  subject: string;
  text: string;
  attachments: MailAttachment[];
  header: (name: string) => string | null;
  /** Every instance of a header, in order, unfolded (for headers that repeat, like Authentication-Results). */
  headerValues: (name: string) => string[];
}

function firstAddress(value: AddressObject | AddressObject[] | undefined): string | null {
  const list = Array.isArray(value) ? value : value ? [value] : [];
  const address = list.flatMap((a) => a.value).find((a) => a.address)?.address;
  return address ? address.toLowerCase() : null;
}

function addressCount(value: AddressObject | AddressObject[] | undefined): number {
  const list = Array.isArray(value) ? value : value ? [value] : [];
  return list.flatMap((a) => a.value).filter((a) => a.address).length;
}

/** Parses a raw message (MIME, any charset and transfer encoding) with mailparser. */
export async function parseMail(raw: Uint8Array): Promise<InboundMail> {
  const mail = await simpleParser(Buffer.from(raw), {
    skipImageLinks: true,
    skipTextToHtml: true,
    skipTextLinks: true,
  });
  // mailparser derives text from HTML only for a message that is one HTML part; an HTML part inside a multipart
  // (multipart/related with its images, say) and no text/plain part leaves `text` empty.
  const text = (mail.text || (typeof mail.html === 'string' ? htmlToText(mail.html) : '')).trim();
  // mailparser's header lines end in CRLF, whatever the message used.
  const headerValues = (name: string) =>
    mail.headerLines
      .filter((h) => h.key === name.toLowerCase())
      .map((h) =>
        h.line
          .slice(h.line.indexOf(':') + 1)
          .replace(/\r\n[ \t]/g, ' ')
          .trim(),
      );
  return {
    messageId: normaliseMessageId(mail.messageId),
    inReplyTo: mail.inReplyTo,
    references: messageIdList(mail.references),
    fromAddress: firstAddress(mail.from),
    fromCount: addressCount(mail.from),
    subject: mail.subject ?? '',
    text,
    attachments: mail.attachments
      .filter((a) => a.contentDisposition !== 'inline' || a.filename)
      .map((a, i) => ({
        fileName: (a.filename ?? `attachment-${i + 1}`).replace(/[\\/]/g, '_').slice(-200),
        contentType: a.contentType || 'application/octet-stream',
        content: a.content,
      })),
    // The first instance as written: mailparser's parsed headers hold no List-* header (it gathers them under
    // `list`), and hold dates and addresses as objects.
    header: (name) => headerValues(name)[0] ?? null,
    headerValues,
  };
}
