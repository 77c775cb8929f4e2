import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export type ReceivedMail = { to: string; text: string };

/**
 * A real SMTP server on loopback that keeps every mail it receives (to whom,
 * and its text with quoted-printable soft breaks joined, so a link reads
 * whole): the inbox a test reads as a person reads theirs.
 */
export async function startInbox(): Promise<{ url: string; mails: ReceivedMail[]; close(): Promise<void> }> {
  const mails: ReceivedMail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    onData(stream, session, callback) {
      let raw = "";
      stream.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")));
      stream.on("end", () => {
        const text = raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
        for (const to of session.envelope.rcptTo) mails.push({ to: to.address, text });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    mails,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}
