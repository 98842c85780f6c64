import { inflateRawSync } from 'node:zlib';

/**
 * How much a zip (an .xlsx workbook) unpacks to, found without trusting it: the sizes its
 * directory declares, each entry then unpacked with that size as a hard limit (zlib stops at it),
 * so a zip bomb that declares little and unpacks to gigabytes costs no more than it declares.
 */
export interface ZipBounds {
  entries: number;
  /** Unpacked bytes of the entries `counted` selects. */
  bytes: number;
}

export class ZipUnreadable extends Error {}
/** An entry unpacks to more than the zip's directory says, or beyond the caller's limit. */
export class ZipTooLarge extends Error {}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/**
 * The zip's entries and the unpacked size of those `counted` selects (each unpacked to check);
 * ZipTooLarge as soon as that size passes `maxBytes` or the entries pass `maxEntries`.
 */
export function zipBounds(
  zip: Uint8Array,
  counted: (name: string) => boolean,
  limits: { maxEntries: number; maxBytes: number },
): ZipBounds {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const u16 = (at: number) => view.getUint16(at, true);
  const u32 = (at: number) => view.getUint32(at, true);
  try {
    // The end of central directory record: in the last 22 bytes, or before a comment of up to 64 KiB.
    let end = zip.length - 22;
    while (end >= 0 && u32(end) !== EOCD) {
      if (zip.length - end > 22 + 0xffff) throw new ZipUnreadable('no end of central directory');
      end--;
    }
    if (end < 0) throw new ZipUnreadable('no end of central directory');
    const entries = u16(end + 10);
    if (entries > limits.maxEntries) throw new ZipTooLarge(`${entries} entries`);
    let at = u32(end + 16);
    let bytes = 0;
    for (let i = 0; i < entries; i++) {
      if (u32(at) !== CENTRAL) throw new ZipUnreadable('bad central directory');
      const method = u16(at + 10);
      const packed = u32(at + 20);
      const declared = u32(at + 24);
      const nameLength = u16(at + 28);
      const local = u32(at + 42);
      const name = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
      at += 46 + nameLength + u16(at + 30) + u16(at + 32);
      if (!counted(name)) continue;
      bytes += declared;
      if (bytes > limits.maxBytes) throw new ZipTooLarge(`${bytes} bytes declared`);
      if (u32(local) !== LOCAL) throw new ZipUnreadable('bad local header');
      const start = local + 30 + u16(local + 26) + u16(local + 28);
      const data = zip.subarray(start, start + packed);
      if (method === 0) {
        if (packed !== declared) throw new ZipTooLarge(`${name}: stored size differs`);
      } else if (method === 8) {
        // One byte over the declared size is enough to catch a lie.
        if (inflateRawSync(data, { maxOutputLength: declared + 1 }).length !== declared)
          throw new ZipTooLarge(`${name}: unpacks to another size than declared`);
      } else throw new ZipUnreadable(`${name}: compression method ${method}`);
    }
    return { entries, bytes };
  } catch (err) {
    if (err instanceof ZipTooLarge || err instanceof ZipUnreadable) throw err;
    // zlib's "Cannot create a Buffer larger than maxOutputLength": more than declared.
    if (err instanceof RangeError && (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new ZipTooLarge('unpacks to more than declared');
    throw new ZipUnreadable((err as Error).message);
  }
}
