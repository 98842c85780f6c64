import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { imageFormat, PageRecogniser, type OcrSessionOptions } from '../../server/services/near-duplicates/ocr.js';

/** One engine of bench/scans/ocr-speed.ts: reads the file it is sent and answers with the characters read. */
const { session, warmUp } = workerData as { session: OcrSessionOptions; warmUp: string };
const recogniser = new PageRecogniser(session);

async function read(file: string): Promise<number> {
  const format = imageFormat({ name: file, contentType: '' })!;
  const read = await recogniser.recognise(fs.readFileSync(file), format);
  return read.status === 'text' ? read.text.length : 0;
}

await read(warmUp);
parentPort!.postMessage('ready');
parentPort!.on('message', (file: string) => void read(file).then((chars) => parentPort!.postMessage({ chars })));
