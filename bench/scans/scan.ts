import { PDFDocument, PDFName } from 'pdf-lib';
import sharp from 'sharp';
import { Random } from '../near-duplicates/edits.js';
import { A4, PRINT_DPI } from './page.js';

/**
 * A printed page scanned by a town's office: fed a little askew and off-centre, at the scanner's
 * resolution, its lamp brighter on one side, its sensor noisy, saved as a JPEG at whatever
 * quality the driver was set to, or as TIFF, or wrapped in a one-page PDF. Every artefact is
 * drawn from the seed: the same seed makes the same bytes.
 */

export const SCAN_FORMATS = ['jpeg', 'tiff', 'pdf'] as const;
export type ScanFormat = (typeof SCAN_FORMATS)[number];

export interface ScanSettings {
  dpi: number;
  /** Degrees, within ±2. */
  rotation: number;
  /** Of the page's width and height, within ±2%. */
  shift: { x: number; y: number };
  /** The scanner's scale error, within ±2%. */
  scale: number;
  blurSigma: number;
  noiseSigma: number;
  /** Darkening across the page from the lamp's side, 0 to 0.3. */
  lighting: { strength: number; angle: number };
  jpegQuality: number;
  format: ScanFormat;
}

const uniform = (rng: Random, lo: number, hi: number) => lo + (hi - lo) * rng.next();

/** The artefacts of one scan; `dpi` and `format` when given, else drawn too (150–300 dpi; JPEG mostly). */
export function drawSettings(rng: Random, fixed: { dpi?: number; format?: ScanFormat } = {}): ScanSettings {
  const drawnDpi = rng.pick([150, 200, 240, 300]);
  const formatDraw = rng.next();
  return {
    dpi: fixed.dpi ?? drawnDpi,
    rotation: uniform(rng, -2, 2),
    shift: { x: uniform(rng, -0.02, 0.02), y: uniform(rng, -0.02, 0.02) },
    scale: uniform(rng, 0.98, 1.02),
    blurSigma: uniform(rng, 0.3, 1.1),
    noiseSigma: uniform(rng, 2, 9),
    lighting: { strength: uniform(rng, 0, 0.3), angle: uniform(rng, 0, 2 * Math.PI) },
    jpegQuality: Math.round(uniform(rng, 50, 90)),
    format: fixed.format ?? (formatDraw < 0.6 ? 'jpeg' : formatDraw < 0.8 ? 'tiff' : 'pdf'),
  };
}

/** A4 at `dpi`, in pixels. */
function pageSize(dpi: number): { width: number; height: number } {
  return { width: Math.round((A4.width * dpi) / PRINT_DPI), height: Math.round((A4.height * dpi) / PRINT_DPI) };
}

/** The page as the scanner's sensor saw it: raw RGB at the scan's resolution. */
async function sensed(
  printed: Buffer,
  s: ScanSettings,
  seed: number,
): Promise<{ data: Buffer; width: number; height: number }> {
  const size = pageSize(s.dpi);
  const scaledWidth = Math.round(size.width * s.scale);
  const rotated = await sharp(printed)
    .resize({ width: scaledWidth })
    .rotate(s.rotation, { background: '#ffffff' })
    .toBuffer({ resolveWithObject: true });
  // The scanner's window: the page's size, moved by the shift; paper off the glass is white.
  const pad = Math.round(size.width * 0.1);
  const left = Math.round(pad + (rotated.info.width - size.width) / 2 + s.shift.x * size.width);
  const top = Math.round(pad + (rotated.info.height - size.height) / 2 + s.shift.y * size.height);
  // sharp extracts before it extends within one pipeline: two pipelines.
  const padded = await sharp(rotated.data)
    .extend({ top: pad, bottom: pad, left: pad, right: pad, background: '#ffffff' })
    .toBuffer();
  const { data, info } = await sharp(padded)
    .extract({ left, top, width: size.width, height: size.height })
    .blur(s.blurSigma)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  // The lamp falls off across the page; the sensor adds Gaussian noise, drawn from a table of
  // samples (Box–Muller once per entry, not per pixel: a 300 dpi page has 8.7 million).
  const noise = new Random(seed ^ 0x5eed);
  const samples = Float64Array.from(
    { length: 4096 },
    () => s.noiseSigma * Math.sqrt(-2 * Math.log(1 - noise.next())) * Math.cos(2 * Math.PI * noise.next()),
  );
  const dx = Math.cos(s.lighting.angle);
  const dy = Math.sin(s.lighting.angle);
  const { width, height, channels } = info;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const along = ((x / width - 0.5) * dx + (y / height - 0.5) * dy + 0.71) / 1.42;
      const light = 1 - s.lighting.strength * along;
      const n = samples[noise.int(4096)]!;
      for (let c = 0; c < channels; c++) {
        const i = (y * width + x) * channels + c;
        data[i] = Math.max(0, Math.min(255, Math.round(data[i]! * light + n)));
      }
    }
  }
  return { data, width, height };
}

/** The scan as the file a clerk uploads. */
export async function scanPage(printed: Buffer, s: ScanSettings, seed: number): Promise<Buffer> {
  const raw = await sensed(printed, s, seed);
  const image = sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 3 } }).withMetadata({
    density: s.dpi,
  });
  switch (s.format) {
    case 'jpeg':
      return image.jpeg({ quality: s.jpegQuality }).toBuffer();
    case 'tiff':
      // Scanner drivers save TIFF with JPEG compression at colour, LZW at grey; colour here.
      return image.tiff({ compression: 'jpeg', quality: s.jpegQuality }).toBuffer();
    case 'pdf':
      return onePagePdf(await image.jpeg({ quality: s.jpegQuality }).toBuffer());
  }
}

/** A PDF of one A4 page that is one JPEG, as a scanner's "scan to PDF" writes: no text layer. */
async function onePagePdf(jpeg: Buffer): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const image = await doc.embedJpg(jpeg);
  const page = doc.addPage([595.28, 841.89]);
  page.drawImage(image, { x: 0, y: 0, width: 595.28, height: 841.89 });
  return Buffer.from(await doc.save());
}

/**
 * The image a one-page scanned PDF wraps, or the file itself for an image: what an OCR engine
 * is given. (A scanner's PDF is a JPEG per page; reading it back needs no PDF renderer.)
 */
export async function scannedImage(file: Buffer, format: ScanFormat): Promise<Buffer> {
  if (format !== 'pdf') return file;
  const doc = await PDFDocument.load(file, { updateMetadata: false });
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    const stream = object as { dict?: { get(name: unknown): unknown }; contents?: Uint8Array };
    if (!stream.dict || !stream.contents) continue;
    const filter = stream.dict.get(PDFName.of('Filter'));
    if (filter === PDFName.of('DCTDecode')) return Buffer.from(stream.contents);
  }
  throw new Error('the scanned PDF holds no JPEG image');
}
