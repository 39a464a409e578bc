import nodemailer, { type Transporter } from 'nodemailer';

export type Mailer = Transporter;

export function createMailer(smtpUrl: string, from: string): Mailer {
  // Plain SMTP on a local sink is normal in development; relays that offer STARTTLS still get it.
  return nodemailer.createTransport(smtpUrl, { from });
}
