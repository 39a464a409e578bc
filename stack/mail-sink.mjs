// A local SMTP server for `npm start`: accepts every message and stores it as an .eml file, so
// invitation mail can be read without a real relay. Usage: node mail-sink.mjs PORT DIR
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';

const [port, dir] = process.argv.slice(2);
mkdirSync(dir, { recursive: true });
const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  onData(stream, session, callback) {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => {
      const to = session.envelope.rcptTo.map((r) => r.address).join(',');
      writeFileSync(
        join(dir, `${Date.now()}-${to.replace(/[^a-zA-Z0-9@.,-]/g, '_')}.eml`),
        Buffer.concat(chunks),
      );
      callback();
    });
  },
});
server.listen(Number(port), '127.0.0.1');
const close = () => server.close(() => process.exit(0));
process.on('SIGTERM', close);
process.on('SIGINT', close);
