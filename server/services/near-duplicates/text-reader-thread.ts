import { parentPort, workerData } from 'node:worker_threads';
import { Fingerprinter, type NearDuplicateSettings } from './fingerprint.js';
import { InProcessTextReader, type GoOn, type PageDone, type ReadReply, type ReadRequest } from './text-reader.js';

/** The thread of a ThreadTextReader: reads each document it is sent, with the settings it was started with. */
const reader = new InProcessTextReader(Fingerprinter.create(workerData as Partial<NearDuplicateSettings>));

/** Images waiting between two pages for the reader's word to go on. */
const waiting = new Map<number, (go: GoOn['go']) => void>();

parentPort!.on('message', (message: ReadRequest | GoOn) => {
  if ('go' in message) waiting.get(message.id)?.(message.go);
  else void answer(message);
});

/** Asks the other side between two pages of an image, and goes on (or stops) when it answers. */
function betweenPages(id: number) {
  return (pageMs: number) =>
    new Promise<void>((resolve, reject) => {
      waiting.set(id, (go) => {
        waiting.delete(id);
        if (go === true) resolve();
        else reject(new Error(go.stop));
      });
      parentPort!.postMessage({ id, pageMs } satisfies PageDone);
    });
}

/** Reads one document and posts the reply; never rejects (a failure is the reply). */
async function answer({ id, bytes, file, paced }: ReadRequest): Promise<void> {
  let reply: ReadReply;
  try {
    const read = await reader.read(bytes, file, paced ? betweenPages(id) : undefined);
    if ('skipped' in read) reply = { id, skipped: read.skipped };
    else {
      const { shingles, ...fingerprint } = read.fingerprint;
      reply = { id, text: read.text, format: read.format, fingerprint, shingles: [...shingles] };
    }
  } catch (error) {
    reply = { id, error: (error as Error)?.message ?? String(error) };
  }
  parentPort!.postMessage(reply);
}
