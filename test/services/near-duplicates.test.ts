import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { FeatureHash } from '../../server/services/near-duplicates/feature-hash.js';
import {
  areNearDuplicates,
  candidateJaccard,
  Fingerprinter,
  nearDuplicateMethod,
  similarity,
} from '../../server/services/near-duplicates/fingerprint.js';
import {
  BAND_DETECTION,
  bandingFor,
  bandKeys,
  candidateChance,
  estimatedJaccard,
  exactJaccard,
  minhash,
  SIGNATURE_SIZE,
} from '../../server/services/near-duplicates/minhash.js';
import { hammingDistance, simhash, simhashBlocks } from '../../server/services/near-duplicates/simhash.js';
import { features, normalise, shingles, textUnits } from '../../server/services/near-duplicates/text.js';
import {
  ENGLISH_PAGE,
  NOTICE,
  OTHER_ENGLISH_PAGE,
  OTHER_NOTICE,
  POEM,
  recognisedWithSpacesLost,
} from '../support/texts.js';

describe('near-duplicate fingerprints of text', () => {
  let fingerprinter: Fingerprinter;
  let hash: FeatureHash;
  before(async () => {
    fingerprinter = await Fingerprinter.create();
    hash = await FeatureHash.create();
  });

  describe('text as the fingerprints see it', () => {
    it('folds full-width forms, traditional script and case into one form', () => {
      assert.equal(normalise('ＡＢＣ１２３，檔案館'), 'abc123,档案馆');
      assert.equal(normalise('Archive DEDUP'), 'archive dedup');
    });

    it('keeps CJK characters one by one and other words whole, without punctuation or spacing', () => {
      assert.deepEqual(textUnits(normalise('档案 Archive-2023，查询！')), ['档', '案', 'archive', '2023', '查', '询']);
    });

    it('ends a word where CJK characters follow it without a space', () => {
      assert.deepEqual(textUnits(normalise('rtc中存储UTC时间，第3号')), [
        'rtc',
        '中',
        '存',
        '储',
        'utc',
        '时',
        '间',
        '第',
        '3',
        '号',
      ]);
    });

    it('makes SimHash features of character bigrams and words, leaving stop words out', () => {
      assert.deepEqual(features(textUnits('the archive 档案的整理')), ['archive', '档案', '案的', '的整', '整理']);
      assert.deepEqual(features(textUnits('的了')), []);
    });

    it('cuts shingles of three CJK characters, and a text shorter than one shingle into one', () => {
      assert.deepEqual([...shingles(['档', '案', '馆', '藏'], 3, 9)], ['档案馆', '案馆藏']);
      assert.deepEqual([...shingles(['档', '案'], 3, 9)], ['档案']);
      assert.equal(shingles([], 3, 9).size, 0);
    });

    it('cuts shingles of nine letters from the words of other scripts, wherever their spaces fell, and keeps about one in five', () => {
      const text = 'The archive keeps every file that the towns of the county upload.';
      const letters = 'thearchivekeepseveryfilethatthetownsofthecountyupload';
      const ninths = new Set(Array.from({ length: letters.length - 8 }, (_, i) => letters.slice(i, i + 9)));
      const read = shingles(textUnits(normalise(text)), 3, 9);
      assert.ok(
        [...read].every((s) => ninths.has(s)),
        [...read].join(' '),
      );
      assert.ok(read.size >= ninths.size / 10 && read.size <= ninths.size / 2.5, `${read.size} of ${ninths.size}`);
      for (const ocr of [
        'The archivekeeps every filethat the towns of thecounty upload.',
        'Thearchive keeps everyfile that thetowns of the county up load',
      ])
        assert.deepEqual(shingles(textUnits(normalise(ocr)), 3, 9), read, ocr);
      assert.deepEqual([...shingles(['page', '12'], 3, 9)], ['page12'], 'shorter than one shingle');
      for (const few of ['archives', 'sealed page', 'file number', 'two copies'])
        assert.ok(shingles(textUnits(few), 3, 9).size >= 1, `never none: ${few}`);
    });

    it('counts a CJK character as three letters where the scripts meet, and keeps every shingle starting at one', () => {
      const cut = [...shingles(textUnits(normalise('rtc中存储')), 3, 9)];
      assert.ok(cut.includes('中存储'));
      assert.ok(
        cut.every((s) => ['rtc中存', 'tc中存储', 'c中存储', '中存储'].includes(s)),
        cut.join(' '),
      );
    });
  });

  describe('SimHash', () => {
    it('gives the same text the same 64-bit fingerprint, and an unrelated one about half its bits different', () => {
      const weights = (text: string) => new Map(features(textUnits(normalise(text))).map((f) => [f, 1]));
      const a = simhash(weights(NOTICE), hash);
      assert.match(a, /^[0-9a-f]{16}$/);
      assert.equal(simhash(weights(NOTICE), hash), a);
      const far = hammingDistance(
        a,
        simhash(weights('The quick brown fox jumps over the lazy dog near the riverbank at dawn.'), hash),
      );
      assert.ok(far >= 16 && far <= 48, `unrelated texts differ in ${far} bits`);
    });

    it('counts differing bits exactly', () => {
      assert.equal(hammingDistance('0000000000000000', '0000000000000000'), 0);
      assert.equal(hammingDistance('0000000000000000', 'ffffffffffffffff'), 64);
      assert.equal(hammingDistance('8000000000000001', '0000000000000000'), 2);
      assert.equal(hammingDistance('00000000f0000000', '0000000000000000'), 4);
    });

    it('splits a fingerprint into four 16-bit blocks, of which any two within distance 3 share one', () => {
      assert.deepEqual(simhashBlocks('0123456789abcdef'), [0x0123, 0x4567, 0x89ab, 0xcdef]);
      for (let trial = 0; trial < 200; trial++) {
        const bits: number[] = Array.from({ length: 64 }, () => (Math.random() < 0.5 ? 1 : 0));
        const flipped = [...bits];
        for (let f = 0; f < 3; f++) {
          const at = Math.floor(Math.random() * 64);
          flipped[at] = 1 - flipped[at]!;
        }
        const hex = (b: number[]) =>
          Array.from({ length: 16 }, (_, i) => parseInt(b.slice(i * 4, i * 4 + 4).join(''), 2).toString(16)).join('');
        const [x, y] = [simhashBlocks(hex(bits)), simhashBlocks(hex(flipped))];
        assert.ok(
          x.some((block, i) => block === y[i]),
          'the pigeonhole principle',
        );
      }
    });
  });

  describe('MinHash', () => {
    it('estimates the Jaccard similarity of two sets within a few hundredths', () => {
      const a = new Set(Array.from({ length: 1000 }, (_, i) => `s${i}`));
      const b = new Set(Array.from({ length: 1000 }, (_, i) => `s${i + 300}`));
      const exact = exactJaccard(a, b);
      assert.equal(exact, 700 / 1300);
      const estimate = estimatedJaccard(minhash(a, hash), minhash(b, hash));
      assert.ok(Math.abs(estimate - exact) < 0.12, `estimate ${estimate} for ${exact}`);
      assert.equal(estimatedJaccard(minhash(a, hash), minhash(new Set(a), hash)), 1);
      assert.equal(minhash(a, hash).length, SIGNATURE_SIZE);
    });

    it('bands signatures with the fewest bands that make pairs at the threshold candidates 98 times in 100, and pairs at half of it rarely', () => {
      for (const threshold of [0.5, 0.8, 0.9]) {
        const banding = bandingFor(threshold);
        assert.ok(banding.bands * banding.rows <= SIGNATURE_SIZE);
        assert.ok(candidateChance(threshold, banding) >= BAND_DETECTION, `at ${threshold}`);
        assert.ok(
          candidateChance(threshold, { ...banding, bands: banding.bands - 1 }) < BAND_DETECTION,
          `no band more than needed at ${threshold}`,
        );
        assert.ok(candidateChance(threshold / 2, banding) < 0.5, `at half of ${threshold}`);
      }
      assert.deepEqual(bandingFor(0.8), { bands: 17, rows: 7 });
      const banding = bandingFor(0.8);
      const sig = minhash(new Set(['a', 'b']), hash);
      assert.equal(bandKeys(sig, banding).length, banding.bands);
      assert.deepEqual(bandKeys(sig, banding), bandKeys(minhash(new Set(['b', 'a']), hash), banding));
    });
  });

  describe('the rule per length', () => {
    it('finds a long document saved again with a sentence added, one taken out, in traditional script and with web page lines', () => {
      const sentences = NOTICE.split('\n');
      const edited = [
        '首页 > 通知公告 > 正文',
        ...sentences.slice(0, 3),
        '（注：本通知同时抄送县委办公室。）',
        ...sentences.slice(4),
        '【打印本页】【关闭窗口】',
      ].join('\n');
      const traditional = '關於做好二〇二三年度檔案整理歸檔工作的通知。\n' + sentences.slice(1).join('\n');
      const original = fingerprinter.fingerprint(NOTICE);
      assert.equal(original.short, false, `${original.units} units`);
      for (const copy of [edited, traditional, NOTICE.replace(/，/g, ', ').replace(/。/g, '. ')]) {
        const fp = fingerprinter.fingerprint(copy);
        assert.ok(areNearDuplicates(original, fp), JSON.stringify(similarity(original, fp)));
      }
    });

    it('tells apart another document on the same subject', () => {
      const a = fingerprinter.fingerprint(NOTICE);
      const b = fingerprinter.fingerprint(OTHER_NOTICE);
      assert.equal(areNearDuplicates(a, b), false, JSON.stringify(similarity(a, b)));
      assert.ok(similarity(a, b).hamming > 3);
    });

    it('finds a short text with a stray line or a note, but not inside a much longer text', () => {
      const poem = fingerprinter.fingerprint(POEM);
      assert.equal(poem.short, true);
      assert.ok(areNearDuplicates(poem, fingerprinter.fingerprint(`${POEM}\n（注：选自唐诗三百首）`)));
      assert.ok(areNearDuplicates(poem, fingerprinter.fingerprint('牀前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。')));
      assert.equal(areNearDuplicates(poem, fingerprinter.fingerprint('静夜思，李白。')), false);
      assert.equal(
        areNearDuplicates(poem, fingerprinter.fingerprint(`${NOTICE}\n${POEM}`)),
        false,
        'quoted in a long text is not a copy of it',
      );
    });

    it('finds a long document held in another at most twice its size, where neither SimHash nor Jaccard would', () => {
      const notice = fingerprinter.fingerprint(NOTICE);
      const withAppendix = fingerprinter.fingerprint(`${NOTICE}\n${OTHER_NOTICE.split('\n').slice(0, 6).join('\n')}`);
      const s = similarity(notice, withAppendix);
      assert.ok(s.hamming > 3 && s.jaccard < 0.8, JSON.stringify(s));
      assert.equal(nearDuplicateMethod(notice, withAppendix), 'containment');
      const otherText = [...OTHER_NOTICE].reverse().join('');
      assert.equal(
        nearDuplicateMethod(notice, fingerprinter.fingerprint(`${NOTICE}\n${OTHER_NOTICE}\n${otherText}`)),
        null,
        'not in one over twice its size',
      );
    });

    it('finds two copies of a short text each edited its own way, which neither holds the other, by the Jaccard for short texts', () => {
      const annotated = fingerprinter.fingerprint(`${POEM}（注：选自唐诗三百首）`);
      const retyped = fingerprinter.fingerprint('首页 > 诗词\n床前明月光，疑是地上霜。举头望明月，低头思远方。');
      const s = similarity(annotated, retyped);
      assert.ok(s.containment < 0.8 && s.jaccard >= 0.5, JSON.stringify(s));
      assert.equal(nearDuplicateMethod(annotated, retyped), 'jaccard');
      assert.equal(
        nearDuplicateMethod(annotated, fingerprinter.fingerprint('明月几时有，把酒问青天。不知天上宫阙，今夕是何年。')),
        null,
        'another poem of the moon',
      );
    });

    it('finds a page of English recognised twice with its words run together differently each time', () => {
      const [first, second] = [
        fingerprinter.fingerprint(recognisedWithSpacesLost(ENGLISH_PAGE, 4, 1)),
        fingerprinter.fingerprint(recognisedWithSpacesLost(ENGLISH_PAGE, 3, 2)),
      ];
      assert.notEqual(nearDuplicateMethod(first, second), null, JSON.stringify(similarity(first, second)));
      const other = fingerprinter.fingerprint(OTHER_ENGLISH_PAGE);
      assert.equal(nearDuplicateMethod(first, other), null, JSON.stringify(similarity(first, other)));
    });

    it('asks LSH for candidates down to the lowest Jaccard a pair passing the rule can have', () => {
      const { short, long } = candidateJaccard();
      assert.equal(long, 0.8);
      assert.ok(
        Math.abs(short - 0.85 / 2.15) < 1e-9,
        'containment 0.85 in a text at most twice the size: J >= 0.85 / (3 - 0.85)',
      );
    });
  });
});
