import nodemailer, { type Transporter } from 'nodemailer';
import SMTPTransport from 'nodemailer/lib/smtp-transport';

export type Mailer = Transporter;

export function createMailer(smtpUrl: string, from: string, timeoutMs: number): Mailer {
  // Plain SMTP on a local sink is normal in development; relays that offer STARTTLS still get it. A relay that
  // stops answering fails the send after the deadline (nodemailer's defaults wait up to ten minutes); the reply
  // activity is retried.
  // The SMTP transport itself merges a URL with options (createTransport would drop the options beside a URL).
  const smtp = new SMTPTransport({
    url: smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return nodemailer.createTransport(smtp, { from });
}
