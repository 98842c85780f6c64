import type { ErrorBody } from '../../shared/errors.js';
import type { ReportName } from '../../shared/reports.js';
import type {
  AuditList,
  BatchFileResult,
  FileList,
  FolderList,
  WithdrawableUploads,
  FileTextSearch,
  FileUploaders,
  ProofResult,
  PasswordChangeView,
  SessionView,
  UploadCheckRequest,
  UploadCheckResult,
} from '../../shared/schemas.js';
import type { VerificationResult } from '../../shared/verification.js';
import type {
  AccountList,
  AccountPatchRequest,
  AccountSummary,
  ImportRowProblem,
  KeptImportView,
  NewAccountRequest,
  NewTokenRequest,
  NewTokenView,
  OneTimePasswordView,
  TokenView,
} from '../../shared/accounts.js';
import { IMPORT_SKIPPED_BLANK_HEADER, IMPORT_SKIPPED_EXAMPLES_HEADER } from '../../shared/accounts.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../shared/schemas.js';
import type { ReceiptRequest, ReceiptSummary, ReceiptView } from '../../shared/receipts.js';
import type { UnitList, UnitView } from '../../shared/units.js';
import type {
  FileUploadList,
  PurgeAnswer,
  TrashList,
  WithdrawalAnswer,
  WithdrawalRequest,
  WithdrawalView,
} from '../../shared/withdrawals.js';
import type { HoldList, HoldRequest, HoldState, HoldView } from '../../shared/holds.js';
import type { DisposalAnswer, DisposalList, DisposalRequest } from '../../shared/disposals.js';
import { ApiError, isErrorCode, NetworkError } from './i18n/index.js';

export interface VerificationView {
  last: VerificationResult | null;
  intervalHours: number;
}

/** How long an answer asked for ahead (ArchiveApi.ahead) waits for the page that wanted it. */
const AHEAD_MS = 10_000;

/** The archive's HTTP API as the page uses it: cookie session plus the session's CSRF token. */
export class ArchiveApi {
  csrfToken: string | null = null;

  /** GET answers asked for ahead of the pages that show them, by path (see ahead). */
  readonly #ahead = new Map<string, { answer: Promise<unknown>; at: number }>();

  /**
   * Asks for a GET's answer now, before the page that shows it has loaded (the app opened on it:
   * its chunk and the session are on their way): the page's own request for the same path within
   * AHEAD_MS takes this answer, once, instead of asking again. A failed one is dropped (the page
   * asks for itself, after logging in say), and so is every one at a login or logout.
   */
  ahead(path: string): void {
    const entry = { answer: this.#send('GET', path), at: Date.now() };
    entry.answer.catch(() => {
      if (this.#ahead.get(path) === entry) this.#ahead.delete(path);
    });
    this.#ahead.set(path, entry);
  }

  #call<T>(method: string, path: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<T> {
    const early = method === 'GET' ? this.#ahead.get(path) : undefined;
    if (early) {
      this.#ahead.delete(path);
      if (Date.now() - early.at < AHEAD_MS) return early.answer as Promise<T>;
    }
    return this.#send(method, path, body, extraHeaders);
  }

  async #send<T>(method: string, path: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json', ...extraHeaders };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.csrfToken && method !== 'GET') headers['X-CSRF-Token'] = this.csrfToken;
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
      });
    } catch (error) {
      throw new NetworkError(error);
    }
    if (response.status === 204) return undefined as T;
    const payload: unknown = await response.json().catch(() => undefined);
    if (!response.ok) throw errorFromResponse(response.status, payload, response.headers.get('Retry-After'));
    return payload as T;
  }

  /** The current session, or null when nobody is logged in. */
  async session(): Promise<SessionView | null> {
    try {
      return this.#remember(await this.#call<SessionView>('GET', '/api/session'));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return null;
      throw error;
    }
  }

  async login(username: string, password: string): Promise<SessionView> {
    this.#ahead.clear();
    return this.#remember(await this.#call<SessionView>('POST', '/api/session', { username, password }));
  }

  async logout(): Promise<void> {
    this.#ahead.clear();
    await this.#call<void>('DELETE', '/api/session');
    this.csrfToken = null;
  }

  /** The caller's own display name ("" removes it); the session as it is now. */
  async setOwnName(displayName: string): Promise<SessionView> {
    return this.#remember(await this.#call<SessionView>('PUT', '/api/session/name', { displayName }));
  }

  async changePassword(
    currentPassword: string,
    newPassword: string,
    revokeTokens = false,
  ): Promise<PasswordChangeView> {
    const view = await this.#call<PasswordChangeView>('PUT', '/api/session/password', {
      currentPassword,
      newPassword,
      ...(revokeTokens ? { revokeTokens } : {}),
    });
    this.#remember(view);
    return view;
  }

  /** Many checks in one request (at most BATCH_MAX_FILES), answered in order. */
  async checks(files: UploadCheckRequest[]): Promise<UploadCheckResult[]> {
    return (await this.#call<{ results: UploadCheckResult[] }>('POST', '/api/uploads/checks', { files })).results;
  }

  /** Many proofs in one request, answered in order; a proof sent again with its claim is answered as counted. */
  async proofs(proofs: Array<{ claimId: string; digests: string[] }>): Promise<ProofResult[]> {
    return (await this.#call<{ results: ProofResult[] }>('POST', '/api/uploads/proofs', { proofs })).results;
  }

  /**
   * Small files in one request, each with its digests, its path in the folder and its own key
   * (counted once under it, whatever batch carries it again). The browser reads each file from
   * disk as the request goes.
   */
  async batch(files: Array<{ file: Blob; md5: string; sha256: string; name: string; type?: string; key: string }>) {
    const form = new FormData();
    form.append(
      'manifest',
      JSON.stringify(files.map(({ md5, sha256, name, type, key }) => ({ md5, sha256, name, type, key }))),
    );
    for (const { file } of files) form.append('file', file, 'file');
    let response: Response;
    try {
      response = await fetch('/api/uploads/batch', {
        method: 'POST',
        headers: { Accept: 'application/json', 'X-CSRF-Token': this.csrfToken ?? '' },
        body: form,
        credentials: 'same-origin',
      });
    } catch (error) {
      throw new NetworkError(error);
    }
    const payload: unknown = await response.json().catch(() => undefined);
    if (!response.ok) throw errorFromResponse(response.status, payload, response.headers.get('Retry-After'));
    return (payload as { results: BatchFileResult[] }).results;
  }

  /** Keeps (or replaces) a folder upload's receipt on the server. */
  putReceipt(id: string, receipt: ReceiptRequest): Promise<ReceiptSummary> {
    return this.#call('PUT', `/api/receipts/${encodeURIComponent(id)}`, receipt);
  }

  receipts(page: { limit: number; offset: number }): Promise<{ items: ReceiptSummary[]; total: number }> {
    return this.#call('GET', `/api/receipts?${query(page)}`);
  }

  receipt(id: string): Promise<ReceiptView> {
    return this.#call('GET', `/api/receipts/${encodeURIComponent(id)}`);
  }

  /** 撤回: uploads by their ids, or a whole receipt's; they leave every count and go to the trash. */
  withdraw(request: WithdrawalRequest): Promise<WithdrawalAnswer> {
    return this.#call('POST', '/api/withdrawals', request);
  }

  /** 回收站: the caller's unit's withdrawn uploads (an administrator's: their reach's). */
  trash(page: { limit: number; offset: number }): Promise<TrashList> {
    return this.#call('GET', `/api/trash?${query(page)}`);
  }

  /** 上传记录: a file's uploads the caller sees, with their upload ids and whether each may be withdrawn. */
  fileUploads(fileId: string, page: { limit: number; offset: number }): Promise<FileUploadList> {
    return this.#call('GET', `/api/files/${encodeURIComponent(fileId)}/uploads?${query(page)}`);
  }

  /** 恢复: the upload counts again. */
  restoreWithdrawal(id: string): Promise<WithdrawalView> {
    return this.#call('POST', `/api/withdrawals/${encodeURIComponent(id)}/restore`);
  }

  /** 冻结: the holds of the administrator's reach, latest first. */
  holds(filter: { state: HoldState; limit: number; offset: number }): Promise<HoldList> {
    return this.#call('GET', `/api/holds?${query(filter)}`);
  }

  /** 冻结: files by id, or a unit, with a reason; sent again with the same key, placed once. */
  placeHold(request: HoldRequest, key: string): Promise<HoldView> {
    return this.#call('POST', '/api/holds', request, { [IDEMPOTENCY_KEY_HEADER]: key });
  }

  /** 解除冻结. */
  liftHold(id: string): Promise<HoldView> {
    return this.#call('POST', `/api/holds/${encodeURIComponent(id)}/lift`);
  }

  /** 销毁 (top-level administrators): files by id, or a receipt's; their bytes go and their uploads leave every count. */
  dispose(request: DisposalRequest): Promise<DisposalAnswer> {
    return this.#call('POST', '/api/disposals', request);
  }

  /** 销毁清册: the register, as far as the caller reaches. */
  disposals(params: URLSearchParams): Promise<DisposalList> {
    return this.#call('GET', `/api/disposals?${params}`);
  }

  /** 彻底删除 (administrators): these withdrawals leave the trash for good. */
  purgeWithdrawals(ids: string[]): Promise<PurgeAnswer> {
    return this.#call('POST', '/api/trash/purge', { withdrawals: ids });
  }

  /** 清空回收站 (administrators): everything in the trash of their reach. */
  emptyTrash(): Promise<PurgeAnswer> {
    return this.#call('POST', '/api/trash/empty', {});
  }

  /** 本单位文件: `params` are the API's own (q, uploader, from, to, type, sort, order, limit, offset). */
  files(params: URLSearchParams): Promise<FileList> {
    return this.#call('GET', `/api/files?${params}`);
  }

  /** One folder of the caller's files (本单位文件 as a 网盘): its sub-folders, then its files. */
  folder(params: URLSearchParams): Promise<FolderList> {
    return this.#call('GET', `/api/files/folders?${params}`);
  }

  /** The uploads 撤回 would take back for some files or a folder, and how many the caller may not. */
  withdrawable(target: { files: string[] } | { folder: string }): Promise<WithdrawableUploads> {
    const params = new URLSearchParams();
    if ('folder' in target) params.set('folder', target.folder);
    else for (const file of target.files) params.append('file', file);
    return this.#call('GET', `/api/files/withdrawable?${params}`);
  }

  /** Who uploaded the caller's files: the uploader filter's choices. */
  /** The caller's files whose text holds every word of `q` (按内容搜索), with snippets. */
  searchTexts(params: URLSearchParams): Promise<FileTextSearch> {
    return this.#call('GET', `/api/files/search?${params}`);
  }

  fileUploaders(): Promise<FileUploaders> {
    return this.#call('GET', '/api/files/uploaders');
  }

  /** An administrator's report table; `params` are the API's own (see reportQuery). */
  report<T>(name: ReportName, params: URLSearchParams): Promise<T> {
    return this.#call('GET', reportUrl(name, params));
  }

  /** How many MD5 collisions the caller's reach holds (the reports' banner; not recorded as a view). */
  collisionCount(): Promise<{ total: number }> {
    return this.#call('GET', '/api/reports/collisions/count');
  }

  /** Marks a near-duplicate pair handled (已处理) with a note. */
  reviewPair(fileA: string, fileB: string, note: string): Promise<{ at: string; userName: string; note: string }> {
    return this.#call('PUT', '/api/reports/near-duplicates/review', { fileA, fileB, note });
  }

  /** Opens a handled pair again. */
  reopenPair(fileA: string, fileB: string): Promise<void> {
    return this.#call('DELETE', `/api/reports/near-duplicates/review?${new URLSearchParams({ fileA, fileB })}`);
  }

  audit(params: URLSearchParams): Promise<AuditList> {
    return this.#call('GET', auditUrl(params));
  }

  verification(): Promise<VerificationView> {
    return this.#call('GET', '/api/verification');
  }

  startVerification(): Promise<{ status: 'started' }> {
    return this.#call('POST', '/api/verification');
  }

  units(params: Record<string, string | number | undefined>): Promise<UnitList> {
    return this.#call('GET', `/api/units?${query(params)}`);
  }

  addUnit(parentId: string | null, name: string): Promise<UnitView> {
    return this.#call('POST', '/api/units', { parentId, name });
  }

  renameUnit(id: string, name: string): Promise<UnitView> {
    return this.#call('PATCH', `/api/units/${encodeURIComponent(id)}`, { name });
  }

  /** Accounts whose units of an earlier version the directory does not hold, a page at a time. */
  unmapped(page: { limit: number; offset: number }): Promise<{ items: AccountSummary[] }> {
    return this.#call('GET', `/api/units/unmapped?${query(page)}`);
  }

  accounts(params: Record<string, string | number | undefined>): Promise<AccountList> {
    return this.#call('GET', accountsPath(params));
  }

  createAccount(request: NewAccountRequest): Promise<OneTimePasswordView> {
    return this.#call('POST', '/api/accounts', request);
  }

  updateAccount(id: string, patch: AccountPatchRequest): Promise<AccountSummary> {
    return this.#call('PATCH', `/api/accounts/${encodeURIComponent(id)}`, patch);
  }

  resetPassword(id: string): Promise<OneTimePasswordView> {
    return this.#call('POST', `/api/accounts/${encodeURIComponent(id)}/password-reset`, {});
  }

  unblock(id: string): Promise<AccountSummary> {
    return this.#call('POST', `/api/accounts/${encodeURIComponent(id)}/unblock`, {});
  }

  /**
   * Accounts from a CSV or Excel (.xlsx) file: the one-time passwords as CSV text, the rows skipped, and where the server keeps a
   * copy of it until downloaded or forgotten (keptUrl); or an ImportRefused naming each bad row.
   */
  async importAccounts(file: File): Promise<ImportedFile> {
    let response: Response;
    try {
      response = await fetch('/api/accounts/import', {
        method: 'POST',
        // The server reads the bytes (a workbook, a CSV in UTF-8 or GBK); the type only says it is a file.
        headers: { 'Content-Type': importType(file), 'X-CSRF-Token': this.csrfToken ?? '' },
        body: file,
        credentials: 'same-origin',
      });
    } catch (error) {
      throw new NetworkError(error);
    }
    if (response.ok) {
      const examples = response.headers.get(IMPORT_SKIPPED_EXAMPLES_HEADER);
      return {
        csv: await response.text(),
        keptUrl: response.headers.get('Location'),
        skipped: {
          examples: examples ? examples.split(',').map(Number) : [],
          blank: Number(response.headers.get(IMPORT_SKIPPED_BLANK_HEADER) ?? 0),
        },
      };
    }
    const payload = (await response.json().catch(() => undefined)) as Partial<ErrorBody> | undefined;
    const rows = (payload?.details as { rows?: ImportRowProblem[] } | undefined)?.rows;
    if (rows) throw new ImportRefused(rows);
    throw errorFromResponse(response.status, payload, response.headers.get('Retry-After'));
  }

  /** The caller's imports whose one-time passwords the server still keeps (each downloads once from keptImportUrl). */
  keptImports(): Promise<{ items: KeptImportView[] }> {
    return this.#call('GET', '/api/accounts/imports');
  }

  /** The kept copy of an import's passwords is no longer needed (they were saved). */
  forgetKeptImport(keptUrl: string): Promise<void> {
    return this.#call('DELETE', keptUrl);
  }

  tokens(scope: 'mine' | 'reach' = 'mine'): Promise<{ items: TokenView[] }> {
    return this.#call('GET', `/api/tokens?scope=${scope}`);
  }

  createToken(request: Partial<NewTokenRequest>): Promise<NewTokenView> {
    return this.#call('POST', '/api/tokens', request);
  }

  revokeToken(id: string): Promise<void> {
    return this.#call('DELETE', `/api/tokens/${encodeURIComponent(id)}`);
  }

  #remember(view: SessionView): SessionView {
    this.csrfToken = view.csrfToken;
    return view;
  }
}

/** An account import refused: every bad row and why (nothing was created). */
/** An import's answer: the CSV with the one-time passwords, where the server keeps it, and the rows it skipped. */
export interface ImportedFile {
  csv: string;
  keptUrl: string | null;
  skipped: { examples: number[]; blank: number };
}

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** The type to send a chosen file as (Windows often gives a CSV none, or Excel's). */
function importType(file: File): string {
  if (/\.xlsx$/i.test(file.name)) return XLSX_TYPE;
  return file.type === XLSX_TYPE ? XLSX_TYPE : 'text/csv';
}

export class ImportRefused extends Error {
  constructor(readonly rows: ImportRowProblem[]) {
    super(`${rows.length} row(s) refused`);
    this.name = 'ImportRefused';
  }
}

/** The path of an accounts page (ArchiveApi.accounts), to ask for it ahead. */
export const accountsPath = (params: Record<string, string | number | undefined>) => `/api/accounts?${query(params)}`;

function query(params: Record<string, string | number | undefined>): URLSearchParams {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== '') q.set(name, String(value));
  return q;
}

/** The disposal register as CSV, with the same filters (a plain link: the session cookie goes along). */
export const disposalsCsvUrl = (params: URLSearchParams) => `/api/disposals.csv?${params}`;

/** A kept import's passwords as a download (a plain link: the session cookie goes along); served once. */
export const keptImportUrl = (id: string) => `/api/accounts/imports/${encodeURIComponent(id)}`;
export const reportUrl = (name: ReportName, params: URLSearchParams) => `/api/reports/${name}?${params}`;
export const auditUrl = (params: URLSearchParams) => `/api/audit?${params}`;

/**
 * A table's export: the same request as a CSV download (a plain link: the session cookie goes
 * along), every row its filters select (no limit or offset), with headers, sizes and times in the
 * reader's language.
 */
export function csvUrl(url: string, language: string): string {
  const [path, query = ''] = url.split('?', 2);
  const params = new URLSearchParams(query);
  params.delete('limit');
  params.delete('offset');
  params.set('format', 'csv');
  params.set('lang', language);
  return `${path}?${params}`;
}

export function errorFromResponse(status: number, payload: unknown, retryAfter: string | null): ApiError {
  const body = payload as Partial<ErrorBody> | undefined;
  const code = isErrorCode(body?.error) ? body.error : status >= 500 ? 'internal' : 'bad_request';
  const seconds = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  const details = body?.details !== null && typeof body?.details === 'object' ? body.details : {};
  return new ApiError(
    status,
    code,
    typeof body?.message === 'string' ? body.message : `HTTP ${status}`,
    seconds,
    details,
  );
}
