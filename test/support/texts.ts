/** Texts for the near-duplicate tests: archive documents of the kind clerks upload. */

/** A notice of the kind an archive holds, long enough (over 500 characters) to count as a long text. */
export const NOTICE = [
  '关于做好二〇二三年度档案整理归档工作的通知。',
  '各乡镇人民政府、县直各单位：为进一步规范全县档案管理工作，提高档案整理质量，根据《中华人民共和国档案法》和上级有关规定，现就做好本年度文书档案整理归档工作通知如下。',
  '一、归档范围。凡是反映本单位主要职能活动、具有保存价值的文件材料，包括会议纪要、请示报告、批复、合同协议、统计报表以及照片、录音录像等，均应收集齐全，按时归档，不得擅自销毁或据为己有。',
  '二、整理要求。归档文件以件为单位进行整理，按年度、机构、保管期限分类，件内文件按正本在前、定稿在后，正文在前、附件在后的顺序排列；每件文件应在首页右上端加盖归档章，逐件编号，编制归档文件目录。',
  '三、电子文件。各单位形成的电子文件应与纸质文件同步归档，归档格式采用通用格式，并附元数据；涉密电子文件按保密规定单独管理，严禁通过互联网传输。',
  '四、移交时间。各单位应于次年六月底前将上一年度整理完毕的档案向县档案馆移交，移交时填写移交清单一式两份，双方签字后各执一份。',
  '五、工作要求。各单位要高度重视，明确分管领导和专兼职档案人员，落实工作经费和库房设施，确保档案安全。县档案局将适时组织检查，检查结果纳入年度目标考核。',
  '六、安全保管。档案库房应做到防火、防盗、防潮、防虫、防光、防尘，配备温湿度记录仪和灭火器材，定期检查并做好记录；调阅档案须履行登记手续，不得涂改、圈划、抽换或携带出库。',
  '七、数字化工作。有条件的单位应对永久和长期保管的档案进行数字化扫描，图像分辨率不低于三百点每英寸，建立目录数据库，实现档案信息的快速检索和利用，数字化成果应异地备份。',
  '八、联系方式。工作中遇到的问题，请及时与县档案局业务指导科联系，联系电话：一二三四五六七。',
  '特此通知。县档案局，二〇二三年三月十五日。',
].join('\n');

/** Another notice on the same subject, written by someone else: a negative a detector must not match. */
export const OTHER_NOTICE = [
  '关于开展机关档案工作业务培训的通知。',
  '县直各部门、各乡镇：为提升全县机关档案人员业务能力，推动档案工作规范化、信息化建设，经研究，决定举办全县机关档案业务培训班，现将有关事项通知如下。',
  '一、培训对象。各部门、各乡镇分管档案工作的负责同志和专兼职档案员，每单位限报两名，新任档案人员必须参加。',
  '二、培训内容。主要学习档案法律法规、文书档案整理规则、电子文件归档与电子档案管理、档案数字化加工标准以及档案安全应急管理等内容，并安排现场观摩和实际操作练习。',
  '三、时间地点。培训时间为四月十日至十一日，共两天；地点在县委党校三楼报告厅，请参训人员于四月十日上午八点半前报到，迟到者按缺席处理。',
  '四、有关要求。参训人员须自带笔记本电脑和本单位近年归档文件样本，培训期间遵守纪律，不得无故缺课；培训结束后进行考试，成绩合格者颁发结业证书，并通报所在单位。',
  '五、报名方式。请各单位于四月五日前将参训人员名单报县档案局办公室，逾期视为放弃。联系人：王某，联系电话：七六五四三二一。',
  '县档案局办公室，二〇二三年三月二十八日。',
].join('\n');

export const POEM = '床前明月光，疑是地上霜。举头望明月，低头思故乡。';

/** NOTICE saved again: copied from a web page (its navigation lines came along), with a note added and a paragraph left out. */
export const NOTICE_FROM_THE_WEB = [
  '首页 > 通知公告 > 正文',
  ...NOTICE.split('\n').slice(0, 3),
  '（注：本通知同时抄送县委办公室。）',
  ...NOTICE.split('\n').slice(4),
  '【打印本页】【关闭窗口】',
].join('\n');

/** POEM in traditional script, with a note. */
export const POEM_TRADITIONAL = '牀前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。（選自《唐詩三百首》）';

/** A page of English as printed (OCR drops spaces from it: recognisedWithSpacesLost). */
export const ENGLISH_PAGE =
  'The archive keeps every file that the towns of the county upload, and finds the same document scanned twice by two ' +
  'offices. A clerk who uploads a page that the county already holds is told so at once, and the bureau sees how often ' +
  'each office sends again what it has sent before, which is what it asked to know.';

export const OTHER_ENGLISH_PAGE =
  'Scanned pages are read in the background while the server is otherwise idle: each page is turned into greyscale, ' +
  'its text recognised, and its image fingerprinted, so that a page scanned again by another town is found as a pair.';

/**
 * English text as OCR reads it off a scan: some words run together (the space after every
 * `every`-th word from the `from`-th dropped), each scan elsewhere ("The countdownhadstalled").
 */
export function recognisedWithSpacesLost(text: string, every: number, from: number): string {
  const words = text.split(' ');
  return words.map((w, i) => (i % every === from || i === words.length - 1 ? w : `${w} `)).join('');
}
