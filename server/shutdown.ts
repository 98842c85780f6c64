import type { Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from './log.js';

/** What an orderly stop needs, in the order it is used. */
export interface ShutdownParts {
  server: Server;
  graceMs: number;
  /** Background work (the fixity check, fingerprinting): asked to stop as the listener closes, awaited with the requests. */
  stopBackground: () => Promise<unknown>;
  /** After the requests: cut-off uploads saved, workers and the store closed. */
  close: () => Promise<void>;
  logger: Logger;
}

/**
 * Stops a serving process in order: the listening socket closes first (a proxy sends new requests
 * to another instance at once), background work winds down alongside the requests in progress,
 * requests still running after `graceMs` are cut off, then everything is closed.
 */
export async function shutDown(p: ShutdownParts): Promise<void> {
  const closed = new Promise<void>((resolve) => p.server.close(() => resolve()));
  // A keep-alive connection whose request just ended would otherwise hold the close open.
  const idle = setInterval(() => p.server.closeIdleConnections(), 200);
  p.server.closeIdleConnections();
  const background = p.stopBackground();
  const finished = await Promise.race([closed.then(() => true), delay(p.graceMs).then(() => false)]);
  clearInterval(idle);
  if (!finished) {
    p.logger.warn(
      'cutting off requests still running after the grace period; resumable uploads keep the bytes that arrived',
    );
    p.server.closeAllConnections();
  }
  await background;
  await p.close();
}
