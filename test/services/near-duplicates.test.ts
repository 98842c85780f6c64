import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { FeatureHash } from '../../server/services/near-duplicates/feature-hash.js';
import { areNearDuplicates, candidateJaccard, Fingerprinter, similarity } from '../../server/services/near-duplicates/fingerprint.js';
import { bandingFor, bandKeys, estimatedJaccard, exactJaccard, minhash, SIGNATURE_SIZE } from '../../server/services/near-duplicates/minhash.js';
import { hammingDistance, simhash, simhashBlocks } from '../../server/services/near-duplicates/simhash.js';
import { features, normalise, shingles, textUnits } from '../../server/services/near-duplicates/text.js';

/** A notice of the kind an archive holds, long enough (over 500 characters) to count as a long text. */
const NOTICE = [
  '关于做好二〇二三年度档案整理归档工作的通知。',
  '各乡镇人民政府、县直各单位：为进一步规范全县档案管理工作，提高档案整理质量，根据《中华人民共和国档案法》和上级有关规定，现就做好本年度文书档案整理归档工作通知如下。',
  '一、归档范围。凡是反映本单位主要职能活动、具有保存价值的文件材料，包括会议纪要、请示报告、批复、合同协议、统计报表以及照片、录音录像等，均应收集齐全，按时归档，不得擅自销毁或据为己有。',
  '二、整理要求。归档文件以件为单位进行整理，按年度、机构、保管期限分类，件内文件按正本在前、定稿在后，正文在前、附件在后的顺序排列；每件文件应在首页右上端加盖归档章，逐件编号，编制归档文件目录。',
  '三、电子文件。各单位形成的电子文件应与纸质文件同步归档，归档格式采用通用格式，并附元数据；涉密电子文件按保密规定单独管理，严禁通过互联网传输。',
  '四、移交时间。各单位应于次年六月底前将上一年度整理完毕的档案向县档案馆移交，移交时填写移交清单一式两份，双方签字后各执一份。',
  '五、工作要求。各单位要高度重视，明确分管领导和专兼职档案人员，落实工作经费和库房设施，确保档案安全。县档案局将适时组织检查，检查结果纳入年度目标考核。',
  '六、联系方式。工作中遇到的问题，请及时与县档案局业务指导科联系，联系电话：一二三四五六七。',
  '特此通知。县档案局，二〇二三年三月十五日。',
].join('\n');

/** Another notice on the same subject, written by someone else: a negative a detector must not match. */
const OTHER_NOTICE = [
  '关于开展机关档案工作业务培训的通知。',
  '县直各部门、各乡镇：为提升全县机关档案人员业务能力，推动档案工作规范化、信息化建设，经研究，决定举办全县机关档案业务培训班，现将有关事项通知如下。',
  '一、培训对象。各部门、各乡镇分管档案工作的负责同志和专兼职档案员，每单位限报两名，新任档案人员必须参加。',
  '二、培训内容。主要学习档案法律法规、文书档案整理规则、电子文件归档与电子档案管理、档案数字化加工标准以及档案安全应急管理等内容，并安排现场观摩和实际操作练习。',
  '三、时间地点。培训时间为四月十日至十一日，共两天；地点在县委党校三楼报告厅，请参训人员于四月十日上午八点半前报到，迟到者按缺席处理。',
  '四、有关要求。参训人员须自带笔记本电脑和本单位近年归档文件样本，培训期间遵守纪律，不得无故缺课；培训结束后进行考试，成绩合格者颁发结业证书，并通报所在单位。',
  '五、报名方式。请各单位于四月五日前将参训人员名单报县档案局办公室，逾期视为放弃。联系人：王某，联系电话：七六五四三二一。',
  '县档案局办公室，二〇二三年三月二十八日。',
].join('\n');

const POEM = '床前明月光，疑是地上霜。举头望明月，低头思故乡。';

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

    it('makes SimHash features of character bigrams and words, leaving stop words out', () => {
      assert.deepEqual(features(textUnits('the archive 档案的整理')), ['archive', '档案', '案的', '的整', '整理']);
      assert.deepEqual(features(textUnits('的了')), []);
    });

    it('cuts shingles of k units, and a text shorter than k into one', () => {
      assert.deepEqual([...shingles(['a', 'b', 'c', 'd'], 3)], ['a\u0001b\u0001c', 'b\u0001c\u0001d']);
      assert.deepEqual([...shingles(['a', 'b'], 3)], ['a\u0001b']);
      assert.equal(shingles([], 3).size, 0);
    });
  });

  describe('SimHash', () => {
    it('gives the same text the same 64-bit fingerprint, and an unrelated one about half its bits different', () => {
      const weights = (text: string) => new Map(features(textUnits(normalise(text))).map((f) => [f, 1]));
      const a = simhash(weights(NOTICE), hash);
      assert.match(a, /^[0-9a-f]{16}$/);
      assert.equal(simhash(weights(NOTICE), hash), a);
      const far = hammingDistance(a, simhash(weights('The quick brown fox jumps over the lazy dog near the riverbank at dawn.'), hash));
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
        const hex = (b: number[]) => Array.from({ length: 16 }, (_, i) => parseInt(b.slice(i * 4, i * 4 + 4).join(''), 2).toString(16)).join('');
        const [x, y] = [simhashBlocks(hex(bits)), simhashBlocks(hex(flipped))];
        assert.ok(x.some((block, i) => block === y[i]), 'the pigeonhole principle');
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

    it('bands signatures so that pairs at the threshold almost always become candidates, and far ones rarely', () => {
      for (const threshold of [0.5, 0.8, 0.9]) {
        const { bands, rows } = bandingFor(threshold);
        assert.ok(bands * rows <= SIGNATURE_SIZE);
        assert.ok(1 - (1 - threshold ** rows) ** bands >= 0.97, `at ${threshold}`);
        assert.ok(1 - (1 - (threshold / 2) ** rows) ** bands < 0.5, `at half of ${threshold}`);
      }
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
      assert.equal(areNearDuplicates(poem, fingerprinter.fingerprint(`${NOTICE}\n${POEM}`)), false, 'quoted in a long text is not a copy of it');
    });

    it('asks LSH for candidates down to the lowest Jaccard a pair passing the rule can have', () => {
      const { short, long } = candidateJaccard();
      assert.equal(long, 0.8);
      assert.ok(Math.abs(short - 0.8 / 2.2) < 1e-9);
    });
  });
});
