import type { ReceiptRowView } from '../../../shared/receipts.js';

/** One 案卷 of a transfer: a sub-folder of the folder uploaded, its files and their bytes. */
export interface TransferVolume {
  /** The sub-folder's name; '' for the files directly in the folder uploaded. */
  name: string;
  files: number;
  bytes: number;
}

/** A row that was handed over: counted (stored, instant, duplicate) and not withdrawn since. */
export const transferred = (r: ReceiptRowView): boolean =>
  (r.outcome === 'stored' || r.outcome === 'instant' || r.outcome === 'duplicate') && r.withdrawal === undefined;

/**
 * The 案卷 of a receipt, by name: the sub-folders of the folder uploaded (a path's second part
 * when every file lies in one folder, its first otherwise), each with its files and bytes, in
 * the order of the sheet (by name, the loose files first).
 */
export function transferVolumes(rows: readonly ReceiptRowView[]): TransferVolume[] {
  const handed = rows.filter(transferred);
  const parts = handed.map((r) => r.path.split('/'));
  const roots = new Set(parts.map((p) => (p.length > 1 ? p[0] : '')));
  // One folder dropped: its name is the receipt's; its sub-folders are the 案卷.
  const depth = roots.size === 1 && !roots.has('') ? 1 : 0;
  const volumes = new Map<string, TransferVolume>();
  handed.forEach((r, i) => {
    const p = parts[i]!;
    const name = p.length - 1 > depth ? p[depth]! : '';
    const volume = volumes.get(name) ?? { name, files: 0, bytes: 0 };
    volume.files++;
    volume.bytes += r.size;
    volumes.set(name, volume);
  });
  return [...volumes.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
