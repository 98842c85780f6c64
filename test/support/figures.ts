import sharp, { type OverlayOptions } from 'sharp';
import { CJK_FONT_FILE } from './scans.js';

/**
 * Pages with little text, which are paired on their images: a photograph, an office's seal, a
 * drawing, drawn from a seed (SVG rendered by sharp) on an A4 page at 300 dpi, with an optional
 * caption. For the fingerprint's tests and the scanned evaluation corpus (bench/scans/corpus.ts).
 */

export type FigureKind = 'photo' | 'seal' | 'drawing';

export interface FigureSpec {
  kind: FigureKind;
  /** Figures of different seeds are different pictures. */
  seed: number;
  /** A line printed under it (a photograph's caption, the seal's date), or none. */
  caption?: string;
}

/** A4 at 300 dpi, 2.5 cm margins (as bench/scans/page.ts prints). */
const A4 = { width: 2480, height: 3508, margin: 295 };

/** The figure printed on A4: its raster (PNG) and the text on it (the caption, or ''). */
export async function printFigure(spec: FigureSpec): Promise<{ png: Buffer; text: string }> {
  let state = spec.seed >>> 0 || 1;
  const next = () => {
    // xorshift32: the same figure for the same seed.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const between = (lo: number, hi: number) => Math.round(lo + (hi - lo) * next());
  const width = A4.width - 2 * A4.margin;
  const height = spec.kind === 'photo' ? 1500 : spec.kind === 'seal' ? 900 : 1800;
  const shapes: string[] = [];
  if (spec.kind === 'photo') {
    // Soft patches of colour over a graded sky, as a print of a photograph looks when scanned.
    shapes.push(
      `<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="rgb(${between(60, 200)},${between(80, 200)},${between(120, 255)})"/><stop offset="1" stop-color="rgb(${between(20, 160)},${between(40, 160)},${between(20, 120)})"/></linearGradient><filter id="soft"><feGaussianBlur stdDeviation="${between(8, 20)}"/></filter></defs>`,
      `<rect width="${width}" height="${height}" fill="url(#sky)"/>`,
    );
    for (let i = between(8, 16); i > 0; i--)
      shapes.push(
        `<ellipse filter="url(#soft)" cx="${between(0, width)}" cy="${between(0, height)}" rx="${between(80, 500)}" ry="${between(60, 400)}" fill="rgb(${between(0, 255)},${between(0, 255)},${between(0, 255)})" opacity="${(0.5 + next() / 2).toFixed(2)}"/>`,
      );
  } else if (spec.kind === 'seal') {
    // A round red seal with its star and the marks of its ring, where it was stamped.
    const cx = between(500, width - 500);
    const cy = 450;
    shapes.push(
      `<circle cx="${cx}" cy="${cy}" r="400" fill="none" stroke="#d40000" stroke-width="${between(18, 30)}"/>`,
      `<polygon fill="#d40000" points="${star(cx, cy, 120, 48)}"/>`,
    );
    const marks = between(6, 14);
    for (let i = 0; i < marks; i++) {
      const angle = Math.PI * (1.15 + (0.7 * i) / marks) + next() * 0.05;
      const [x, y] = [Math.round(cx + 300 * Math.cos(angle)), Math.round(cy + 300 * Math.sin(angle))];
      shapes.push(
        `<rect fill="#d40000" x="${x - 30}" y="${y - 30}" width="60" height="${between(40, 70)}" transform="rotate(${Math.round((angle * 180) / Math.PI + 90)} ${x} ${y})"/>`,
      );
    }
  } else {
    // A site plan's rooms and lines.
    for (let i = between(10, 24); i > 0; i--)
      shapes.push(
        next() < 0.5
          ? `<rect x="${between(0, width - 400)}" y="${between(0, height - 400)}" width="${between(100, 900)}" height="${between(100, 900)}" fill="none" stroke="black" stroke-width="${between(4, 12)}"/>`
          : `<line x1="${between(0, width)}" y1="${between(0, height)}" x2="${between(0, width)}" y2="${between(0, height)}" stroke="black" stroke-width="${between(4, 10)}"/>`,
      );
  }
  const svg = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${shapes.join('')}</svg>`,
  );
  const top = A4.margin + 200;
  const layers: OverlayOptions[] = [{ input: await sharp(svg).png().toBuffer(), left: A4.margin, top }];
  if (spec.caption) {
    const caption = await sharp({
      text: {
        text: spec.caption.replace(/&/g, '&amp;').replace(/</g, '&lt;'),
        font: 'WenQuanYi Micro Hei 12',
        fontfile: CJK_FONT_FILE,
        dpi: 300,
        rgba: true,
      },
    })
      .png()
      .toBuffer({ resolveWithObject: true });
    layers.push({
      input: caption.data,
      left: Math.round((A4.width - caption.info.width) / 2),
      top: top + height + 60,
    });
  }
  const png = await sharp({ create: { width: A4.width, height: A4.height, channels: 3, background: '#ffffff' } })
    .composite(layers)
    .png({ compressionLevel: 1 })
    .toBuffer();
  return { png, text: spec.caption ?? '' };
}

/** The printed page with everything on it `right` pixels further right: the same seal stamped elsewhere on another sheet. */
export async function movedRight(png: Buffer, right: number): Promise<Buffer> {
  return sharp(png)
    .extend({ left: right, background: '#ffffff' })
    .extract({ left: 0, top: 0, width: A4.width, height: A4.height })
    .png()
    .toBuffer();
}

/** A five-pointed star's points around (cx, cy). */
function star(cx: number, cy: number, outer: number, inner: number): string {
  return Array.from({ length: 10 }, (_, i) => {
    const r = i % 2 === 0 ? outer : inner;
    const a = -Math.PI / 2 + (i * Math.PI) / 5;
    return `${Math.round(cx + r * Math.cos(a))},${Math.round(cy + r * Math.sin(a))}`;
  }).join(' ');
}

/** How a page is scanned again: drawn from a seed within the scanned corpus's bounds. */
export interface Rescan {
  dpi: number;
  format: 'jpeg' | 'tiff';
}

/**
 * A 300 dpi page scanned as a town's office would: turned up to ±2°, moved up to 2%, scaled by up
 * to 2%, its lamp darker on one side by up to 30%, noisy, JPEG quality 50–90, at `dpi`. A compact
 * form of bench/scans/scan.ts's artefacts, drawn from `seed`.
 */
export async function rescanned(png: Buffer, seed: number, { dpi, format }: Rescan): Promise<Buffer> {
  let state = (seed >>> 0) ^ 0x9e3779b9 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const uniform = (lo: number, hi: number) => lo + (hi - lo) * next();
  const width = Math.round((A4.width * dpi) / 300);
  const height = Math.round((A4.height * dpi) / 300);
  const rotated = await sharp(png)
    .resize({ width: Math.round(width * uniform(0.98, 1.02)) })
    .rotate(uniform(-2, 2), { background: '#ffffff' })
    .toBuffer({ resolveWithObject: true });
  const pad = Math.round(width * 0.1);
  const left = Math.round(pad + (rotated.info.width - width) / 2 + uniform(-0.02, 0.02) * width);
  const top = Math.round(pad + (rotated.info.height - height) / 2 + uniform(-0.02, 0.02) * height);
  const padded = await sharp(rotated.data)
    .extend({ top: pad, bottom: pad, left: pad, right: pad, background: '#ffffff' })
    .toBuffer();
  const { data, info } = await sharp(padded)
    .extract({ left, top, width, height })
    .blur(uniform(0.3, 1.1))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const [strength, angle, noise] = [uniform(0, 0.3), uniform(0, 2 * Math.PI), uniform(2, 9)];
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const along = ((x / width - 0.5) * Math.cos(angle) + (y / height - 0.5) * Math.sin(angle) + 0.71) / 1.42;
      const n = (next() + next() + next() - 1.5) * 2 * noise; // about Gaussian, sd ≈ noise
      for (let c = 0; c < info.channels; c++) {
        const i = (y * width + x) * info.channels + c;
        data[i] = Math.max(0, Math.min(255, Math.round(data[i]! * (1 - strength * along) + n)));
      }
    }
  const image = sharp(data, { raw: { width, height, channels: info.channels } });
  const quality = Math.round(uniform(50, 90));
  return format === 'jpeg'
    ? image.jpeg({ quality }).toBuffer()
    : image.tiff({ compression: 'jpeg', quality }).toBuffer();
}
