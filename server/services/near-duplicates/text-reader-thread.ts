import { parentPort, workerData } from 'node:worker_threads';
import { Fingerprinter, type NearDuplicateSettings } from './fingerprint.js';
import { InProcessTextReader, type ReadReply, type ReadRequest } from './text-reader.js';

/** The thread of a ThreadTextReader: reads each document it is sent, with the settings it was started with. */
const reader = new InProcessTextReader(Fingerprinter.create(workerData as Partial<NearDuplicateSettings>));

parentPort!.on('message', (request: ReadRequest) => void answer(request));

/** Reads one document and posts the reply; never rejects (a failure is the reply). */
async function answer({ id, bytes, file }: ReadRequest): Promise<void> {
  let reply: ReadReply;
  try {
    const read = await reader.read(bytes, file);
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
