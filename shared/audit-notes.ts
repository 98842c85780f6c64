import type { TokenScope } from './accounts.js';
import { WITHDRAWAL_REASON_NAMES, type WithdrawalReason } from './withdrawals.js';

/** What the audit log records (append-only; nothing in the service edits or removes an event). */
export const AUDIT_ACTIONS = [
  'login',
  'login_failed',
  'login_throttled',
  'logout',
  'password_changed',
  'upload',
  'upload_failed',
  'instant_upload',
  'proof_failed',
  'download',
  'account_created',
  'account_updated',
  'account_disabled',
  'account_enabled',
  'account_unblocked',
  'unit_created',
  'unit_renamed',
  'password_reset',
  'token_created',
  'token_revoked',
  'audit_viewed',
  'audit_exported',
  'report_viewed',
  'report_exported',
  'verification_started',
  'near_duplicate_reviewed',
  'near_duplicate_reopened',
  'upload_withdrawn',
  'upload_restored',
  'hold_placed',
  'hold_lifted',
  'content_disposed',
  'upload_purged',
  'content_deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * The audit log's presets: groups of actions a reader looks at together. `administration`
 * (管理操作) is what the page opens on: what administrators changed, and what left the archive as
 * an export, not the thousands of uploads and views around them.
 */
export const AUDIT_GROUPS = {
  administration: [
    'account_created',
    'account_updated',
    'account_disabled',
    'account_enabled',
    'account_unblocked',
    'password_reset',
    'unit_created',
    'unit_renamed',
    'token_created',
    'token_revoked',
    'verification_started',
    'near_duplicate_reviewed',
    'near_duplicate_reopened',
    'audit_exported',
    'report_exported',
    // Corrections change every count: the bureau reviews them with its own actions.
    'upload_withdrawn',
    'upload_restored',
    // 冻结 stops withdrawals, purges and disposals: who held what, and who let it go.
    'hold_placed',
    'hold_lifted',
    'content_disposed',
    'upload_purged',
    'content_deleted',
  ],
  signIn: ['login', 'login_failed', 'login_throttled', 'logout', 'password_changed'],
  files: [
    'upload',
    'upload_failed',
    'instant_upload',
    'proof_failed',
    'download',
    'upload_withdrawn',
    'upload_restored',
    'content_disposed',
    'upload_purged',
    'content_deleted',
  ],
  viewing: ['audit_viewed', 'audit_exported', 'report_viewed', 'report_exported'],
} as const satisfies Record<string, readonly AuditAction[]>;
export type AuditGroup = keyof typeof AUDIT_GROUPS;
export const AUDIT_GROUP_NAMES = Object.keys(AUDIT_GROUPS) as AuditGroup[];

/**
 * What an audit event says beyond its action, as data: each language words it (AUDIT_NOTE_WORDS),
 * so a Chinese page and a Chinese export read Chinese. The event's `detail` keeps the English
 * wording too, for the text search and for readers of the raw log; events recorded before notes
 * existed have only that.
 */
export type AuditNote =
  | { code: 'wrong_password' }
  | { code: 'wrong_current_password' }
  | { code: 'throttled_account'; failures: number }
  | { code: 'throttled_address'; failures: number }
  /** Failed logins summed up: from one address, or (`all`) from all together, this hour so far. */
  | { code: 'wrong_passwords'; count: number; from: 'address' | 'all'; recorded: number }
  | { code: 'password_changed'; tokensRevoked: number | null }
  | { code: 'upload'; via: UploadVia; stored: boolean }
  | { code: 'checksum_mismatch'; via: UploadVia; algorithm: 'MD5' | 'SHA-256'; declared: string; actual: string }
  | { code: 'proof_refused'; reason: ProofRefusal }
  | { code: 'proofs_refused'; count: number; of: number; reasons: Partial<Record<ProofRefusal, number>> }
  | { code: 'proofs_unrecorded'; limit: number }
  | { code: 'download'; length: number; range?: { start: number; end: number }; preview?: boolean; page?: number }
  | { code: 'unit_created'; path: string[]; unitId: string }
  | { code: 'unit_renamed'; path: string[]; name: string; unitId: string }
  | ({
      code: 'account_created';
      role: 'clerk' | 'admin';
      by: 'administrator' | 'csv' | 'command' | 'first_start';
    } & Partial<AccountNamed & { unit: string; displayName: string }>)
  | ({ code: 'account_updated'; role?: Change; unit?: Change; name?: NameChange } & AccountNamed)
  | ({ code: 'account_disabled' } & AccountNamed)
  | ({ code: 'account_named' } & AccountNamed)
  | ({ code: 'password_reset'; tokensRevoked: number; byCommand?: boolean } & Partial<AccountNamed>)
  | {
      code: 'token_created';
      tokenId: string;
      label: string;
      expiresInDays: number | null;
      byCommand?: boolean;
      /** Absent on events of earlier versions (and from the command): no scope. */
      scopes?: TokenScope[];
      /** The token it was made with (absent: a browser session or the command). */
      withToken?: string;
    }
  | ({ code: 'token_revoked'; tokenId: string; label: string; byCommand?: boolean } & Partial<AccountNamed>)
  | { code: 'viewed'; table?: string; filters: Array<[string, string]> }
  | { code: 'pair_reviewed'; nameA: string; nameB: string; note: string }
  | { code: 'pair_reopened'; nameA: string; nameB: string }
  | ({ code: 'withdrawn' } & WithdrawalNoted)
  | ({ code: 'restored' } & WithdrawalNoted)
  | ({ code: 'hold_placed' } & HoldNoted)
  | ({ code: 'hold_lifted' } & HoldNoted)
  /** A file disposed of (销毁): why, under which approval, and how many uploads left the counts. */
  | { code: 'disposed'; disposalId: string; reason: string; approvalRef: string; uploads: number; withdrawn: number }
  /** Out of the trash for good (`expired`: its time there was over, purged by the sweep). */
  | ({ code: 'purged'; expired: boolean } & WithdrawalNoted)
  /** A content no upload holds any more, deleted with its bytes: why (the purge of its last upload, or a disposal). */
  | { code: 'content_deleted'; length: number; why: string };

/** A hold placed or lifted: on how many files, or on which unit (its path), and why it was placed. */
interface HoldNoted {
  holdId: string;
  files?: number;
  unit?: string;
  reason: string;
}

/** A withdrawal or restore of an upload: whose upload, of which unit and when, and why it was withdrawn. */
interface WithdrawalNoted {
  withdrawalId: string;
  uploader: string;
  unit: string;
  uploadedAt: string;
  reason: WithdrawalReason;
  note?: string;
}

export type AuditNoteCode = AuditNote['code'];
export type UploadVia = 'direct' | 'tus' | 'batch';
export const PROOF_REFUSALS = [
  'unknown_claim',
  'others_claim',
  'expired_claim',
  'wrong_digests',
  'content_gone',
] as const;
export type ProofRefusal = (typeof PROOF_REFUSALS)[number];
interface AccountNamed {
  username: string;
  accountId: string;
}
interface Change {
  from: string;
  to: string;
}
/** A display name before and after (null: none). */
interface NameChange {
  from: string | null;
  to: string | null;
}

type NoteOf<C extends AuditNoteCode> = Extract<AuditNote, { code: C }>;
type NoteWords = { [C in AuditNoteCode]: (note: NoteOf<C>) => string };
export type WordsLanguage = 'zh-CN' | 'en';

const ROLE: Record<WordsLanguage, Record<string, string>> = {
  'zh-CN': { clerk: '档案员', admin: '管理员' },
  en: { clerk: 'clerk', admin: 'admin' },
};
const VIA: Record<UploadVia, string> = { direct: '网页上传', tus: '断点续传', batch: '批量上传' };
const REFUSAL: Record<WordsLanguage, Record<ProofRefusal, string>> = {
  'zh-CN': {
    unknown_claim: '秒传请求不存在或已答复',
    others_claim: '他人的秒传请求',
    expired_claim: '秒传请求已过期',
    wrong_digests: '文件内容不符',
    content_gone: '文件正在删除',
  },
  en: {
    unknown_claim: 'unknown or already answered claim',
    others_claim: "another account's claim",
    expired_claim: 'expired claim',
    wrong_digests: 'wrong digests',
    content_gone: 'content being deleted',
  },
};
/** The names of the filters a report or the audit log was viewed with (query parameters). */
const FILTER: Record<string, string> = {
  from: '从',
  to: '至',
  city: '市',
  county: '县（市、区）',
  town: '乡（镇、街道）',
  q: '名称含',
  user: '用户',
  action: '操作',
  group: '分组',
  sort: '排序',
  order: '顺序',
  limit: '每页条数',
  offset: '起始条',
  status: '状态',
  min: '至少',
  unitId: '单位代码',
  copies: '同批重复',
};
/** Filter values that are codes (sort columns, orders, groupings), in Chinese. */
const FILTER_VALUE: Record<string, string> = {
  asc: '升序',
  desc: '降序',
  entry: '按文件',
  user: '按用户',
  unit: '按单位',
  day: '按日',
  week: '按周',
  month: '按月',
  savedBytes: '节省空间',
  savedUploads: '秒传次数',
  uploads: '上传次数',
  uploadCount: '上传次数',
  repeatUploads: '重复上传次数',
  repeatBytes: '重复上传量',
  files: '文件数',
  users: '用户数',
  units: '单位数',
  period: '时间',
  md5: '校验码',
  fileLength: '大小',
  fileName: '文件名',
  userName: '用户',
  firstUploadTime: '首次上传',
  lastUploadTime: '最近上传',
  uploadDate: '首次上传',
  foundAt: '发现时间',
  jaccard: '相似度',
  hamming: '相似度',
  open: '待处理',
  reviewed: '已处理',
  all: '全部',
  include: '计入',
  exclude: '不计（只看重复发送）',
};
/** A filter's value in words: sort columns, orders and groupings, actions, a review status. */
const valueWords = (language: WordsLanguage, name: string, value: string): string => {
  if (name === 'action' && value in AUDIT_ACTION_NAMES[language])
    return AUDIT_ACTION_NAMES[language][value as AuditAction];
  const words = language === 'zh-CN' ? FILTER_VALUE : PLAIN_VALUE;
  return (['sort', 'order', 'group', 'status', 'copies'].includes(name) ? words[value] : undefined) ?? value;
};

/** Paging is how a page was read, not what was asked for: left to 详情. */
const PAGING: ReadonlySet<string> = new Set(['limit', 'offset']);
const TABLE: Record<string, string> = {
  'repeat-uploaders': '重复上传',
  'cross-unit': '跨单位重复',
  savings: '节省空间',
  collisions: '待核查文件',
  'near-duplicates': '近似重复',
};

/** A number and its English noun, one or many. */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const checksums = (n: NoteOf<'checksum_mismatch'>) => `${n.algorithm} ${n.actual}, not the declared ${n.declared}`;
/** An account as the log names it: its login and id (the words for people leave the id to 详情). */
const who = (n: Partial<AccountNamed>) =>
  n.username ? (n.accountId ? `${n.username} (${n.accountId})` : n.username) : '';
const nameEn = (name: string | null) => (name === null ? '(none)' : `"${name}"`);
const nameZh = (name: string | null) => (name === null ? '（无）' : `“${name}”`);
const tokenEn = (n: { tokenId: string; label: string }) => `token ${n.tokenId}${n.label ? ` (${n.label})` : ''}`;
const tokenZh = (n: { tokenId: string; label: string }) => `令牌 ${n.tokenId}${n.label ? `（${n.label}）` : ''}`;

const REASON_EN: Record<WithdrawalReason, string> = {
  wrong_file: 'wrong file',
  wrong_unit: 'wrong unit',
  repeated: 'uploaded again',
  must_not_keep: 'holds what must not be kept',
  other: 'other',
};

const SCOPE_ZH: Record<TokenScope, string> = { tokens: '创建令牌', accounts: '管理账号' };

/** The log's own English (the event's detail, which its text search reads): as before notes. */
const logWords: NoteWords = {
  pair_reviewed: (n) => `"${n.nameA}" and "${n.nameB}" handled${n.note ? `: ${n.note}` : ''}`,
  pair_reopened: (n) => `"${n.nameA}" and "${n.nameB}" open again`,
  withdrawn: (n) =>
    `upload by ${n.uploader} (${n.unit}, ${n.uploadedAt}) withdrawn: ${REASON_EN[n.reason]}${n.note ? `: ${n.note}` : ''} (withdrawal ${n.withdrawalId})`,
  purged: (n) =>
    `upload by ${n.uploader} (${n.unit}, ${n.uploadedAt}) purged from the trash${n.expired ? ' (its time there was over)' : ''}: it can no longer be restored (withdrawal ${n.withdrawalId})`,
  content_deleted: (n) => `content deleted with its bytes (${n.length} bytes): ${n.why}`,
  restored: (n) =>
    `upload by ${n.uploader} (${n.unit}, ${n.uploadedAt}) restored, counted again (withdrawal ${n.withdrawalId})`,
  hold_placed: (n) =>
    `hold placed on ${n.unit === undefined ? count(n.files ?? 0, 'file') : `every file of ${n.unit}`}: ${n.reason} (hold ${n.holdId})`,
  hold_lifted: (n) =>
    `hold lifted from ${n.unit === undefined ? count(n.files ?? 0, 'file') : `every file of ${n.unit}`}, placed for: ${n.reason} (hold ${n.holdId})`,
  disposed: (n) =>
    `disposed of under ${n.approvalRef}: ${n.reason}; ${n.uploads} uploads left every count, ${n.withdrawn} left the trash (disposal ${n.disposalId})`,
  wrong_password: () => 'wrong username or password',
  wrong_current_password: () => 'password change: wrong current password',
  throttled_account: (n) =>
    `${n.failures} wrong passwords for this account from several addresses: tries from addresses it has not logged in from now wait`,
  throttled_address: (n) =>
    `${n.failures} wrong passwords from this address for several accounts: tries here for accounts not used here now wait`,
  wrong_passwords: (n) =>
    n.from === 'address'
      ? `${n.count} wrong passwords from this address this hour; the first ${n.recorded} are recorded one by one`
      : `${n.count} wrong passwords from all addresses together this hour; the first ${n.recorded} are recorded one by one, the rest only in these sums`,
  password_changed: (n) =>
    `other sessions ended${n.tokensRevoked === null ? '' : `; ${count(n.tokensRevoked, 'API token')} revoked`}`,
  upload: (n) => `${n.via}: ${n.stored ? 'stored' : 'duplicate'}`,
  checksum_mismatch: (n) => `${n.via}: the received bytes have ${checksums(n)}`,
  proof_refused: (n) => REFUSAL.en[n.reason],
  proofs_refused: (n) =>
    `${n.count} of ${n.of} proofs of one request: ${Object.entries(n.reasons)
      .map(([why, count]) => `${count} ${REFUSAL.en[why as ProofRefusal]}`)
      .join(', ')}`,
  proofs_unrecorded: (n) =>
    `more than ${n.limit} refused proofs this minute: the rest of the minute's are not recorded one by one`,
  download: (n) =>
    `${n.preview ? (n.page ? `preview of page ${n.page}: ` : 'preview: ') : ''}${n.range ? `bytes ${n.range.start}-${n.range.end - 1} of ${n.length}` : `${n.length} bytes`}`,
  unit_created: (n) => `${n.path.join(' / ')} (${n.unitId})`,
  unit_renamed: (n) => `${n.path.join(' / ')} → ${n.name} (${n.unitId})`,
  account_created: (n) =>
    n.by === 'first_start'
      ? 'admin with a one-time password, at the first start'
      : n.by === 'command'
        ? `${n.role}${n.displayName ? `, name ${nameEn(n.displayName)}` : ''}, by the archive command`
        : `${who(n)}, ${n.displayName ? `name ${nameEn(n.displayName)}, ` : ''}${n.role}, unit ${n.unit ?? ''}${n.by === 'csv' ? ', from a CSV import' : ''}`,
  account_updated: (n) =>
    `${who(n)}: ${[
      n.role && `role ${n.role.from} → ${n.role.to}`,
      n.unit && `unit ${n.unit.from} → ${n.unit.to}`,
      n.name && `name ${nameEn(n.name.from)} → ${nameEn(n.name.to)}`,
    ]
      .filter(Boolean)
      .join('; ')}`,
  account_disabled: (n) => `${who(n)}: sessions ended, API tokens suspended`,
  account_named: (n) => who(n),
  password_reset: (n) =>
    n.byCommand
      ? `by the archive command; sessions ended, ${count(n.tokensRevoked, 'API token')} revoked`
      : `${who(n)}: sessions ended, ${count(n.tokensRevoked, 'API token')} revoked`,
  token_created: (n) =>
    n.byCommand
      ? `${tokenEn(n)}, by the archive command`
      : `${tokenEn(n)}, ${n.expiresInDays === null ? 'never expires' : `expires in ${count(n.expiresInDays, 'day')}`}, ${
          n.scopes?.length ? `scopes: ${n.scopes.join(', ')}` : 'no scope'
        }${n.withToken ? `, made with token ${n.withToken}` : ''}`,
  token_revoked: (n) => (n.byCommand ? `${tokenEn(n)}, by the archive command` : `${tokenEn(n)} of ${who(n)}`),
  viewed: (n) =>
    [n.table, n.filters.length > 0 ? n.filters.map(([k, v]) => `${k}=${v}`).join('&') : 'all']
      .filter(Boolean)
      .join(': '),
};

const zh: NoteWords = {
  pair_reviewed: (n) => `「${n.nameA}」与「${n.nameB}」已处理${n.note ? `：${n.note}` : ''}`,
  pair_reopened: (n) => `「${n.nameA}」与「${n.nameB}」改回待处理`,
  withdrawn: (n) =>
    `撤回 ${n.uploader} 于 ${n.uploadedAt} 的上传：${WITHDRAWAL_REASON_NAMES[n.reason]}${n.note ? `（${n.note}）` : ''}`,
  restored: (n) => `恢复 ${n.uploader} 于 ${n.uploadedAt} 的上传，重新计数`,
  hold_placed: (n) => `冻结${n.unit === undefined ? ` ${n.files ?? 0} 个文件` : `“${n.unit}”的全部文件`}：${n.reason}`,
  hold_lifted: (n) =>
    `解除冻结${n.unit === undefined ? ` ${n.files ?? 0} 个文件` : `“${n.unit}”的全部文件`}（冻结原因：${n.reason}）`,
  disposed: (n) =>
    `依 ${n.approvalRef} 销毁：${n.reason}；${n.uploads} 次上传不再计数，${n.withdrawn} 个撤回的上传移出回收站`,
  purged: (n) =>
    `彻底删除 ${n.uploader} 于 ${n.uploadedAt} 的上传${n.expired ? '（回收站保留期已满）' : ''}，不能再恢复`,
  content_deleted: (n) => `删除文件内容（${n.length} 字节）：${n.why}`,
  wrong_password: () => '用户名或密码错误',
  wrong_current_password: () => '修改密码时当前密码错误',
  throttled_account: (n) => `此账号从多个地址输错密码 ${n.failures} 次：未用过的地址须等待后再试`,
  throttled_address: (n) => `此地址为多个账号输错密码 ${n.failures} 次：在此登录未用过的账号须等待后再试`,
  wrong_passwords: (n) =>
    n.from === 'address'
      ? `本小时此地址已输错密码 ${n.count} 次（前 ${n.recorded} 次逐条记录）`
      : `本小时所有地址共输错密码 ${n.count} 次（前 ${n.recorded} 次逐条记录，其余只计入此类汇总）`,
  password_changed: (n) => `其他登录已退出${n.tokensRevoked === null ? '' : `，吊销令牌 ${n.tokensRevoked} 个`}`,
  upload: (n) => `${VIA[n.via]}：${n.stored ? '首次上传，已保存' : '档案库已有，未重复保存'}`,
  checksum_mismatch: (n) => `${VIA[n.via]}：收到的文件与客户端声明的校验码（${n.algorithm}）不符，未保存`,
  proof_refused: (n) => REFUSAL['zh-CN'][n.reason],
  proofs_refused: (n) =>
    `一次请求中 ${n.of} 个秒传有 ${n.count} 个被拒绝：${Object.entries(n.reasons)
      .map(([why, count]) => `${REFUSAL['zh-CN'][why as ProofRefusal]} ${count} 个`)
      .join('，')}`,
  proofs_unrecorded: (n) => `本分钟被拒绝的秒传超过 ${n.limit} 个：其余的不再逐条记录`,
  download: (n) =>
    `${n.preview ? (n.page ? `预览第 ${n.page} 页：` : '预览：') : ''}${n.range ? `第 ${n.range.start}–${n.range.end - 1} 字节（共 ${n.length} 字节）` : `共 ${n.length} 字节`}`,
  unit_created: (n) => `${n.path.join(' / ')}（${n.unitId}）`,
  unit_renamed: (n) => `${n.path.join(' / ')} 改名为 ${n.name}（${n.unitId}）`,
  account_created: (n) =>
    n.by === 'first_start'
      ? '首次启动时创建的管理员（一次性密码）'
      : n.by === 'command'
        ? `${ROLE['zh-CN'][n.role]}${n.displayName ? `，姓名 ${nameZh(n.displayName)}` : ''}，由服务器命令创建`
        : `${n.username ?? ''}，${n.displayName ? `姓名 ${nameZh(n.displayName)}，` : ''}${ROLE['zh-CN'][n.role]}，单位 ${n.unit ?? ''}${n.by === 'csv' ? '，批量导入' : ''}`,
  account_updated: (n) =>
    `${n.username ?? ''}：${[
      n.role && `角色 ${ROLE['zh-CN'][n.role.from] ?? n.role.from} → ${ROLE['zh-CN'][n.role.to] ?? n.role.to}`,
      n.unit && `单位 ${n.unit.from} → ${n.unit.to}`,
      n.name && `姓名 ${nameZh(n.name.from)} → ${nameZh(n.name.to)}`,
    ]
      .filter(Boolean)
      .join('；')}`,
  account_disabled: (n) => `${n.username ?? ''}：已退出全部登录，令牌暂停使用`,
  account_named: (n) => n.username ?? '',
  password_reset: (n) =>
    `${n.byCommand ? '由服务器命令重置；' : `${n.username ?? ''}：`}已退出全部登录，吊销令牌 ${n.tokensRevoked} 个`,
  token_created: (n) =>
    n.byCommand
      ? `${tokenZh(n)}，由服务器命令创建`
      : `${tokenZh(n)}，${n.expiresInDays === null ? '永不过期' : `${n.expiresInDays} 天后过期`}，${
          n.scopes?.length ? `权限：${n.scopes.map((s) => SCOPE_ZH[s]).join('、')}` : '无额外权限'
        }${n.withToken ? `，用令牌 ${n.withToken} 创建` : ''}`,
  token_revoked: (n) => (n.byCommand ? `${tokenZh(n)}，由服务器命令吊销` : `${n.username ?? ''} 的${tokenZh(n)}`),
  viewed: (n) =>
    [
      n.table && (TABLE[n.table] ?? n.table),
      n.filters.some(([k]) => !PAGING.has(k))
        ? n.filters
            .filter(([k]) => !PAGING.has(k))
            .map(([k, v]) => `${FILTER[k] ?? k}=${valueWords('zh-CN', k, v)}`)
            .join('，')
        : '全部',
    ]
      .filter(Boolean)
      .join('：'),
};

const PLAIN_VIA: Record<UploadVia, string> = { direct: 'Web upload', tus: 'Resumable upload', batch: 'Batch upload' };
const PLAIN_TABLE: Record<string, string> = {
  'repeat-uploaders': 'Repeat uploads',
  'cross-unit': 'Cross-unit duplicates',
  savings: 'Space saved',
  collisions: 'Files to check',
  'near-duplicates': 'Near-duplicates',
};
const PLAIN_FILTER: Record<string, string> = {
  q: 'name contains',
  group: 'grouped',
  sort: 'sorted by',
  unitId: 'unit code',
  min: 'at least',
  town: 'township',
  copies: 'copies within one upload',
};
const PLAIN_VALUE: Record<string, string> = {
  asc: 'ascending',
  desc: 'descending',
  savedBytes: 'space saved',
  savedUploads: 'instant uploads',
  uploadCount: 'uploads',
  repeatUploads: 'repeat uploads',
  repeatBytes: 'repeated size',
  fileLength: 'size',
  fileName: 'file name',
  userName: 'user',
  firstUploadTime: 'first upload',
  lastUploadTime: 'last upload',
  uploadDate: 'first upload',
  foundAt: 'found',
  md5: 'checksum',
  jaccard: 'similarity',
  hamming: 'similarity',
  entry: 'by file',
  user: 'by user',
  unit: 'by unit',
  open: 'to look at',
  reviewed: 'handled',
  all: 'all',
  include: 'counted',
  exclude: 'left out (re-sends only)',
};

/** English for people: the log's words where they are plain, others where they are the engineers'. */
const PLAIN_REFUSAL: Record<ProofRefusal, string> = {
  unknown_claim: 'instant-upload request unknown or already answered',
  others_claim: 'instant-upload request made by another account',
  expired_claim: 'instant-upload request expired',
  wrong_digests: 'file content did not match',
  content_gone: 'the file is being deleted from the archive',
};

/** The log's words for an account note, without the account's id (it is under 详情). */
const withoutId =
  <C extends AuditNoteCode>(code: C) =>
  (n: NoteOf<C>): string =>
    plainEnglish((logWords[code] as (n: NoteOf<C>) => string)(withRoleNames({ ...n, accountId: undefined })));

const ROLE_NAME_EN: Record<string, string> = { clerk: 'Clerk', admin: 'Administrator' };
/** A note's roles by their names (the values only: a login that reads "admin" stays as it is). */
const withRoleNames = <N extends AuditNote>(n: N): N => {
  const role = (n as { role?: unknown }).role;
  if (typeof role === 'string') return { ...n, role: ROLE_NAME_EN[role] ?? role };
  if (role && typeof role === 'object') {
    const { from, to } = role as { from: string; to: string };
    return { ...n, role: { from: ROLE_NAME_EN[from] ?? from, to: ROLE_NAME_EN[to] ?? to } };
  }
  return n;
};

/** The log's English as people say it: the server's command not named. */
const plainEnglish = (words: string) =>
  words.replace(/\bby the archive command\b/g, 'on the server, by its system administrator');

const en: NoteWords = {
  ...logWords,
  account_created: withoutId('account_created'),
  account_updated: withoutId('account_updated'),
  account_disabled: withoutId('account_disabled'),
  account_named: withoutId('account_named'),
  password_reset: withoutId('password_reset'),
  token_revoked: withoutId('token_revoked'),
  token_created: (n) => plainEnglish(logWords.token_created(n)),
  proof_refused: (n) => PLAIN_REFUSAL[n.reason],
  proofs_refused: (n) =>
    `${n.count} of ${n.of} instant uploads in one request refused: ${Object.entries(n.reasons)
      .map(([why, count]) => `${count} × ${PLAIN_REFUSAL[why as ProofRefusal]}`)
      .join(', ')}`,
  upload: (n) =>
    `${PLAIN_VIA[n.via]}: ${n.stored ? 'first upload, stored' : 'already in the archive, not stored again'}`,
  checksum_mismatch: (n) =>
    `${PLAIN_VIA[n.via]}: the bytes received do not match the checksum the browser declared; nothing stored`,
  viewed: (n) => {
    const asked = n.filters.filter(([k]) => !PAGING.has(k));
    return [
      n.table && (PLAIN_TABLE[n.table] ?? n.table),
      asked.length > 0
        ? asked.map(([k, v]) => `${PLAIN_FILTER[k] ?? k} ${valueWords('en', k, v)}`).join(', ')
        : 'everything',
    ]
      .filter(Boolean)
      .join(': ');
  },
};

const WORDS: Record<WordsLanguage, NoteWords> = { 'zh-CN': zh, en };

/** A note in a language's words, for people (pages, exports for people). */
export function auditNoteText(language: WordsLanguage, note: AuditNote): string {
  const words = WORDS[language][note.code] as (n: AuditNote) => string;
  return words(note);
}

/** A note as the log's English detail (kept as it was before notes: its text search reads it). */
export function auditNoteDetail(note: AuditNote): string {
  return (logWords[note.code] as (n: AuditNote) => string)(note);
}

/**
 * What only an administrator who investigates needs, beside a note's plain words: checksums, and
 * the raw parameters a report was viewed with (shown under 详情).
 */
export function auditNoteTechnical(note: AuditNote): string | undefined {
  if (note.code === 'checksum_mismatch') return checksums(note);
  if ('accountId' in note && note.accountId) return `account ${note.accountId}`;
  if (note.code === 'viewed' && note.filters.length > 0) return note.filters.map(([k, v]) => `${k}=${v}`).join('&');
  return undefined;
}

const CODES: ReadonlySet<string> = new Set(Object.keys(logWords));

/** A note read back from a store: kept if its code is known to this version, else dropped (the detail remains). */
export function storedAuditNote(value: unknown): AuditNote | null {
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return value !== null && typeof value === 'object' && CODES.has(String((value as { code?: unknown }).code))
    ? (value as AuditNote)
    : null;
}

/** Every audit action's name, in each language (the audit page, its filter and its export). */
export const AUDIT_ACTION_NAMES: Record<WordsLanguage, Record<AuditAction, string>> = {
  'zh-CN': {
    login: '登录',
    login_failed: '登录失败',
    login_throttled: '登录受限（密码错误过多）',
    logout: '退出登录',
    password_changed: '修改密码',
    upload: '上传',
    upload_failed: '上传失败',
    instant_upload: '秒传',
    proof_failed: '秒传被拒绝',
    download: '下载',
    account_created: '创建账号',
    account_updated: '修改账号',
    account_disabled: '停用账号',
    account_enabled: '启用账号',
    account_unblocked: '解除登录限制',
    unit_created: '添加单位',
    unit_renamed: '单位改名',
    password_reset: '重置密码',
    token_created: '创建令牌',
    token_revoked: '吊销令牌',
    audit_viewed: '查看审计日志',
    audit_exported: '导出审计日志',
    report_viewed: '查看报表',
    report_exported: '导出报表',
    verification_started: '启动完整性校验',
    near_duplicate_reviewed: '近似重复已处理',
    near_duplicate_reopened: '近似重复改回待处理',
    upload_withdrawn: '撤回上传',
    upload_restored: '恢复上传',
    hold_placed: '冻结',
    hold_lifted: '解除冻结',
    content_disposed: '销毁文件',
    upload_purged: '彻底删除上传',
    content_deleted: '删除文件内容',
  },
  en: {
    login: 'Log in',
    login_failed: 'Failed login',
    login_throttled: 'Logins slowed (too many wrong passwords)',
    logout: 'Log out',
    password_changed: 'Password changed',
    upload: 'Upload',
    upload_failed: 'Failed upload',
    instant_upload: 'Instant upload',
    proof_failed: 'Instant upload refused',
    download: 'Download',
    account_created: 'Account created',
    account_updated: 'Account changed',
    account_disabled: 'Account disabled',
    account_enabled: 'Account enabled',
    account_unblocked: 'Login throttle cleared',
    unit_created: 'Unit added',
    unit_renamed: 'Unit renamed',
    password_reset: 'Password reset',
    token_created: 'API token created',
    token_revoked: 'API token revoked',
    audit_viewed: 'Audit log viewed',
    audit_exported: 'Audit log exported',
    report_viewed: 'Report viewed',
    report_exported: 'Report exported',
    verification_started: 'Fixity check started',
    near_duplicate_reviewed: 'Similar files handled',
    near_duplicate_reopened: 'Similar files reopened',
    upload_withdrawn: 'Upload withdrawn',
    upload_restored: 'Upload restored',
    hold_placed: 'Hold placed',
    hold_lifted: 'Hold lifted',
    content_disposed: 'File disposed of',
    upload_purged: 'Upload purged',
    content_deleted: 'Content deleted',
  },
};
