/** A file the import could not take, and why. */
export interface ImportProblem {
  path: string;
  recordId?: string;
  reason: string;
}

/**
 * The figures of an import. Every file seen ends in exactly one of: uploaded, instant (the
 * archive held it already), duplicatesInTree (same content as an earlier file of this import),
 * alreadyImported (finished by an earlier run, per the journal), skipped (uploaded into this
 * account's unit by this account before, not counted again: --count-again counts them) or errors.
 */
export interface ImportReport {
  seen: number;
  uploaded: number;
  instant: number;
  duplicatesInTree: number;
  alreadyImported: number;
  /** Files this account had uploaded into its unit before (found by the archive, not the journal): counted nowhere. */
  skipped: number;
  /** Bytes put on the wire, this run. */
  bytesSent: number;
  /** Bytes of the files recorded without sending their content (instant and in-tree duplicates). */
  bytesSaved: number;
  errors: ImportProblem[];
  /** Files of 0 bytes (imported, but usually a sign of a broken scan or export). */
  emptyFiles: number;
  /** Names that were not UTF-8 and were read as GB18030. */
  legacyNames: number;
  dryRun: boolean;
  /** Stopped by Ctrl-C (or SIGTERM) before every file was done; a re-run continues. */
  interrupted: boolean;
  seconds: number;
}

export function emptyReport(dryRun: boolean): ImportReport {
  return {
    seen: 0,
    uploaded: 0,
    instant: 0,
    duplicatesInTree: 0,
    alreadyImported: 0,
    skipped: 0,
    bytesSent: 0,
    bytesSaved: 0,
    errors: [],
    emptyFiles: 0,
    legacyNames: 0,
    dryRun,
    interrupted: false,
    seconds: 0,
  };
}

/** What a dry run found: identical files in the tree, and files the archive holds already. */
export interface DryRunFindings {
  /** Groups of two or more files with the same content, in tree order. */
  groups: Array<{ md5: string; size: number; inArchive: boolean; labels: string[] }>;
  inArchive: string[];
}

/** What a dry run found, as the clerk reads it: every path on a line of its own. */
export function dryRunLines(findings: DryRunFindings): string[] {
  const lines: string[] = [];
  // Files finish hashing in any order: sorted, the same tree always reads the same.
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const groups = findings.groups
    .filter((g) => g.labels.length > 1)
    .map((g) => ({ ...g, labels: [...g.labels].sort(byText) }))
    .sort((a, b) => byText(a.labels[0]!, b.labels[0]!));
  lines.push(`Identical files within the tree: ${groups.length} group(s)`);
  for (const g of groups) {
    lines.push(
      `  ${g.labels.length} files of ${formatBytes(g.size)}, MD5 ${g.md5}${g.inArchive ? ', already in the archive' : ''}:`,
    );
    for (const label of g.labels) lines.push(`    ${label}`);
  }
  lines.push(`Files the archive already holds: ${findings.inArchive.length}`);
  for (const label of [...findings.inArchive].sort(byText)) lines.push(`  ${label}`);
  return lines;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The summary a person reads at the end (the JSON line carries the same figures). */
export function summaryLines(r: ImportReport): string[] {
  const lines = [
    `${r.dryRun ? 'Dry run: nothing was uploaded. ' : ''}${r.interrupted ? 'Interrupted: run the same command again to continue. ' : ''}Files seen: ${r.seen}`,
  ];
  if (r.dryRun) {
    lines.push(`  to upload:                   ${r.uploaded}`);
    lines.push(`  already in the archive:      ${r.instant}`);
  } else {
    lines.push(`  uploaded:                    ${r.uploaded}`);
    lines.push(`  instant (archive had them):  ${r.instant}`);
  }
  lines.push(`  duplicates within the tree:  ${r.duplicatesInTree}`);
  if (r.alreadyImported > 0) lines.push(`  done by an earlier run:      ${r.alreadyImported}`);
  if (r.skipped > 0)
    lines.push(
      `  skipped, you uploaded them into your unit before: ${r.skipped} (counted nowhere; --count-again counts them)`,
    );
  lines.push(`  errors:                      ${r.errors.length}`);
  lines.push(
    `Bytes sent: ${formatBytes(r.bytesSent)}; ${r.dryRun ? 'deduplication would save' : 'saved by deduplication'}: ${formatBytes(r.bytesSaved)}`,
  );
  if (r.emptyFiles > 0)
    lines.push(`Note: ${r.emptyFiles} file(s) of 0 bytes (often a failed scan or export; imported all the same).`);
  if (r.legacyNames > 0)
    lines.push(`Note: ${r.legacyNames} name(s) were not UTF-8 and were read as GB18030 (Chinese Windows).`);
  for (const e of r.errors) lines.push(`error: ${e.path}${e.recordId ? ` (record ${e.recordId})` : ''}: ${e.reason}`);
  return lines;
}
