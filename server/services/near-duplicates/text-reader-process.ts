import os from 'node:os';
import { Fingerprinter } from './fingerprint.js';
import { DEFAULT_OCR_SESSION, PageRecogniser } from './ocr.js';
import {
  InProcessTextReader,
  type GoOn,
  READING_NICENESS,
  type PageDone,
  type ReadingProcessArgs,
  type ReadReply,
  type ReadRequest,
} from './text-reader.js';

/**
 * The process of a ProcessTextReader: reads each document it is sent, with the settings it was
 * started with (its one argument). sharp, PDFium and onnxruntime are loaded here, when the first
 * image or scanned PDF comes, and nowhere else.
 */
const args = JSON.parse(process.argv[2] ?? '{}') as ReadingProcessArgs;
// Reading is background work: the web server's requests (uploads, checks, reports) take the
// cores first, and a page goes on with what they leave. The threads started later (onnxruntime's)
// inherit it.
os.setPriority(READING_NICENESS);
const reader = new InProcessTextReader(
  Fingerprinter.onFirstUse(args.settings),
  args.ocr ? new PageRecogniser({ ...DEFAULT_OCR_SESSION, intraOpThreads: args.ocrThreads ?? 1 }) : null,
);

/** Images waiting between two pages for the reader's word to go on. */
const waiting = new Map<number, (go: GoOn['go']) => void>();

process.on('message', (message: ReadRequest | GoOn) => {
  if ('go' in message) waiting.get(message.id)?.(message.go);
  else void answer(message);
});
// The server is gone (stopped, or killed without a word): nothing is left to read for.
process.on('disconnect', () => process.exit(0));

/**
 * A message that could not go (the server died as it was sent: EPIPE) is dropped: the
 * disconnect ends this process. Without a callback it would be an unhandled 'error' event.
 */
const sent = () => {};

/** Asks the other side between two pages of an image, and goes on (or stops) when it answers. */
function betweenPages(id: number) {
  return (pageMs: number) =>
    new Promise<void>((resolve, reject) => {
      waiting.set(id, (go) => {
        waiting.delete(id);
        if (go === true) resolve();
        else reject(new Error(go.stop));
      });
      process.send!({ id, pageMs } satisfies PageDone, sent);
    });
}

/** Reads one document and sends the reply; never rejects (a failure is the reply). */
async function answer({ id, bytes, file, paced }: ReadRequest): Promise<void> {
  let reply: ReadReply;
  try {
    const read = await reader.read(bytes, file, paced ? betweenPages(id) : undefined);
    if ('skipped' in read) reply = { id, skipped: read.skipped, pageImages: read.pageImages };
    else {
      const { shingles, ...fingerprint } = read.fingerprint;
      reply = {
        id,
        text: read.text,
        format: read.format,
        recognised: read.recognised,
        fingerprint,
        shingles: [...shingles],
        pageImages: read.pageImages,
        ...(read.pageTexts && {
          pageTexts: read.pageTexts.map(({ text, fingerprint: { shingles: pageShingles, ...page } }) => ({
            text,
            fingerprint: page,
            shingles: [...pageShingles],
          })),
        }),
        terms: read.terms,
      };
    }
  } catch (error) {
    reply = { id, error: (error as Error)?.message ?? String(error) };
  }
  if (process.connected) process.send!(reply, sent);
}
