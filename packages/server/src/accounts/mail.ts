import nodemailer from "nodemailer";
import type { Logger } from "../logger.js";

export type Mail = { to: string; subject: string; text: string };

/**
 * How the console's mails leave: by SMTP when `SMTP_URL` is set; otherwise
 * they are written to the server's log (a newcomer on the embedded default
 * can still invite and reset: the link is in the log), and `configured` is
 * false so a caller can tell.
 */
export type Mailer = { readonly configured: boolean; send(mail: Mail): Promise<void> };

export function createMailer(options: { smtpUrl: string | undefined; from: string }, logger: Logger): Mailer {
  if (!options.smtpUrl) {
    return {
      configured: false,
      send(mail) {
        logger.warn({ mail: { to: mail.to, subject: mail.subject, text: mail.text } }, "mail not sent (no SMTP_URL): here it is");
        return Promise.resolve();
      },
    };
  }
  const transport = nodemailer.createTransport(options.smtpUrl);
  return {
    configured: true,
    async send(mail) {
      await transport.sendMail({ from: options.from, to: mail.to, subject: mail.subject, text: mail.text });
    },
  };
}
