import { parseArgs } from 'node:util';
import { CorpusMissingError, loadCorpus } from '../near-duplicates/corpus.js';
import { generateCorpus, labelledPairs } from './corpus.js';
import { FontMissingError } from './page.js';

/**
 * `npm run corpus:scans -- --out DIR [--originals N --figures N --seed S]`: the scanned evaluation corpus
 * written to DIR (scans and manifest.json), the same bytes for the same seed. For the pairing
 * evaluation and for looking at the scans; the images are never committed.
 */
const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    originals: { type: 'string', default: '12' },
    figures: { type: 'string', default: '6' },
    seed: { type: 'string', default: '20261129' },
  },
});
if (!values.out) {
  console.error('usage: npm run corpus:scans -- --out DIR [--originals N] [--figures N] [--seed S]');
  process.exit(1);
}

try {
  const started = performance.now();
  const manifest = await generateCorpus(loadCorpus(), {
    dir: values.out,
    originals: Number(values.originals),
    figures: Number(values.figures),
    seed: Number(values.seed),
  });
  const pairs = labelledPairs(manifest);
  const scans = manifest.pages.flatMap((p) => p.scans);
  console.log(
    `${manifest.pages.length} pages, ${scans.length} scans (${['jpeg', 'tiff', 'pdf'].map((f) => `${scans.filter((s) => s.format === f).length} ${f}`).join(', ')}) in ${values.out} ` +
      `(${((performance.now() - started) / 1000).toFixed(1)} s): ${pairs.rescans.length} re-scan pairs, ` +
      `${pairs.edited.length} edited-text pairs, ${pairs.templateNegatives.length} template negatives`,
  );
} catch (err) {
  if (err instanceof CorpusMissingError || err instanceof FontMissingError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}
