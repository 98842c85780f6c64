import { FileStore } from '@tus/file-store';
import { Server } from '@tus/server';

/**
 * The tus bench's reference: a plain @tus/server over @tus/file-store, nothing else (no
 * authentication, hashing or archive). Usage: node tus-reference.js <directory>; listens on
 * 127.0.0.1 on a free port and prints {"port":N}; uploads go to /files.
 */
const directory = process.argv[2];
if (!directory) {
  process.stderr.write('usage: tus-reference.js <directory>\n');
  process.exit(2);
}

const tus = new Server({ path: '/files', datastore: new FileStore({ directory }) });
const server = tus.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on a TCP port');
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => process.exit(1), 5_000).unref();
});
