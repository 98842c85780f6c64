import { cleanFileName } from '../../shared/file-name.js';
import type { Readable } from 'node:stream';
import type {
  FileList,
  FileListQuery,
  FileSummary,
  FileUploaders,
  FolderList,
  FolderListQuery,
  Unit,
} from '../../shared/schemas.js';
import type { VerificationProblem, VerificationResult } from '../../shared/verification.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { ArchiveStore } from '../store/archive-store.js';
import type { ByteRange } from '../store/content/port.js';
import type { CatalogEntry } from '../store/catalog/port.js';
import type { Account } from '../store/accounts/port.js';
import type { ViewScope } from '../store/ledger/port.js';
import type { UnitFileListing } from '../store/unit-files/port.js';
import type { ReportCalendar } from './calendar.js';
import type { Principal } from './sessions.js';
import type { UnitDirectory } from './unit-directory.js';

/** A file as one caller may see it. */
export interface VisibleFile {
  entry: CatalogEntry;
  /** The caller's unit's own name for it (a clerk), or its first name (an admin). */
  fileName: string;
  /** Its media type, chosen the same way. */
  contentType: string;
  /** When it was uploaded, as far as the caller may know: by the unit (a clerk), first ever (an admin). */
  since: Date;
}

/**
 * Who may see what: clerks see the files their unit uploaded, administrators those uploaded
 * within their reach (everything for the top level). A file a caller may not see is reported as
 * not found, so its existence is not revealed.
 */
export class FileService {
  constructor(
    private readonly store: Pick<ArchiveStore, 'catalog' | 'ledger' | 'unitFiles' | 'content' | 'accounts'>,
    private readonly directory: Pick<UnitDirectory, 'reachSubtree'>,
    private readonly calendar: Pick<ReportCalendar, 'startOf' | 'endOf'>,
  ) {}

  /** Which files a caller sees: its unit's (a clerk), its reach's (an administrator of a subtree), all (top level). */
  private async visibleTo(account: Account): Promise<ViewScope | undefined> {
    if (account.role !== 'admin') return { unitId: account.unit.id };
    const subtree = await this.directory.reachSubtree(account);
    return subtree ? { subtree } : undefined;
  }

  async list(principal: Principal, query: FileListQuery): Promise<FileList> {
    const { account } = principal;
    const scope = await this.visibleTo(account);
    const uploaderId = query.uploader === undefined ? undefined : await this.uploaderIn(scope, query.uploader);
    const page = await this.store.unitFiles.list({
      ...scope,
      accountId: account.id,
      ...(query.q ? { nameContains: query.q } : {}),
      ...(uploaderId !== undefined && { uploaderId }),
      ...(query.from && { firstUploadFrom: this.calendar.startOf(query.from) }),
      ...(query.to && { firstUploadBefore: this.calendar.endOf(query.to) }),
      ...(query.type && { kind: query.type }),
      ...(query.sort && { sort: query.sort }),
      ...(query.order && { order: query.order }),
      limit: query.limit,
      offset: query.offset,
    });
    const names = await this.store.accounts.displayNames(page.items.flatMap((l) => l.uploaders));
    return {
      items: page.items.map((l) => summaryOf(l, names)),
      total: page.total,
      limit: query.limit,
      offset: query.offset,
      sort: page.sort,
      order: page.order,
    };
  }

  /** One folder of the files the caller sees, as a 网盘 shows it: its sub-folders, then its files. */
  async folder(principal: Principal, query: FolderListQuery): Promise<FolderList> {
    const { account } = principal;
    const page = await this.store.unitFiles.folder({
      ...(await this.visibleTo(account)),
      accountId: account.id,
      folder: query.path,
      limit: query.limit,
      offset: query.offset,
    });
    const names = await this.store.accounts.displayNames(page.files.flatMap((l) => l.uploaders));
    return {
      path: query.path,
      folders: page.folders,
      files: page.files.map((l) => ({ ...summaryOf(l, names), path: l.path })),
      folderTotal: page.folderTotal,
      fileTotal: page.fileTotal,
      limit: query.limit,
      offset: query.offset,
    };
  }

  /** Everybody who uploaded files the caller sees (the uploader filter's choices). */
  async uploaders(principal: Principal): Promise<FileUploaders> {
    const uploaders = await this.store.ledger.uploaders(await this.visibleTo(principal.account));
    const names = await this.store.accounts.displayNames(uploaders.map((u) => u.username));
    return { items: uploaders.map((u) => ({ ...u, displayName: names.get(u.username) ?? null })) };
  }

  /**
   * The account an uploader filter names (its id or login), if the caller's view holds its
   * uploads or it belongs there now; otherwise the caller is told so, the same way whether the
   * account is elsewhere or does not exist.
   */
  private async uploaderIn(scope: ViewScope | undefined, idOrLogin: string): Promise<string> {
    const account = (await this.store.accounts.get(idOrLogin)) ?? (await this.store.accounts.findByUsername(idOrLogin));
    if (account && (belongsTo(account.unit, scope) || (await this.hasUploadedIn(scope, account.id)))) return account.id;
    throw new ValidationError(
      `Invalid uploader: nobody called "${idOrLogin}" uploads ${scope && 'unitId' in scope ? 'in your unit' : 'where you can see'}; choose one from the list of uploaders (GET /api/files/uploaders).`,
      { field: 'uploader' },
    );
  }

  private async hasUploadedIn(scope: ViewScope | undefined, accountId: string): Promise<boolean> {
    return (await this.store.ledger.uploaders(scope)).some((u) => u.id === accountId);
  }

  /**
   * A fixity check's result as the caller may hear of it: an administrator of a subtree, of the
   * damaged files of its reach only (then counted from those listed).
   */
  async verificationInReach(account: Account, result: VerificationResult): Promise<VerificationResult> {
    const visible = await this.visibleTo(account);
    if (!visible || result.problems.length === 0) return result;
    const seen = await Promise.all(result.problems.map((p) => this.store.ledger.hasUploadInScope(p.fileId, visible)));
    const problems = result.problems.filter((_, i) => seen[i]);
    if (problems.length === result.problems.length) return result;
    const count = (kind: VerificationProblem['kind']) => problems.filter((p) => p.kind === kind).length;
    return { ...result, problems, missing: count('missing'), corrupted: count('corrupted') };
  }

  async open(principal: Principal, fileId: string): Promise<VisibleFile> {
    const entry = await this.store.catalog.get(fileId);
    const admin = principal.account.role === 'admin';
    const visible = admin ? await this.visibleTo(principal.account) : undefined;
    // The whole archive's view names a file by its catalog entry; a reach's, by the reach's latest
    // upload of it (as its list shows it: a preview offered there must be one the file allows).
    if (entry && admin) {
      if (!visible) return { entry, fileName: entry.fileName, contentType: entry.contentType, since: entry.uploadDate };
      const inReach = await this.store.ledger.latestUploadInScope(fileId, visible);
      if (inReach)
        return {
          entry,
          fileName: cleanFileName(inReach.lastUploadFileName),
          contentType: inReach.lastContentType,
          since: inReach.uploadTime,
        };
    }
    const upload = entry && (await this.store.ledger.latestUnitUpload(principal.account.unit.id, fileId));
    if (!entry || !upload)
      throw new NotFoundError(
        'No file with this id is visible to you. Check the link, or ask your archive administrator.',
      );
    return {
      entry,
      // The ledger's name is the upload's path in the clerk's folder; a download is named as the file.
      fileName: cleanFileName(upload.lastUploadFileName),
      contentType: upload.lastContentType,
      since: upload.uploadTime,
    };
  }

  read(file: VisibleFile, range?: ByteRange): Readable {
    return this.store.content.read(file.entry, range);
  }
}

/** A listing's file as the API answers it (`names`: the uploaders' display names by login). */
function summaryOf(l: UnitFileListing, names: Map<string, string>): FileSummary {
  return {
    fileId: l.entry.fileId,
    fileName: l.displayName,
    contentType: l.displayType,
    fileLength: l.entry.length,
    fileMD5: l.entry.md5,
    uploadDate: l.firstUploadTime.toISOString(),
    uploadCount: l.uploadCount,
    myUploadCount: l.myUploadCount,
    lastUploadTime: l.lastUploadTime.toISOString(),
    names: l.names,
    nameCount: l.nameCount,
    uploaders: l.uploaders,
    uploaderDisplayNames: l.uploaders.map((login) => names.get(login) ?? null),
    uploaderCount: l.uploaderCount,
  };
}

/** Whether a unit lies in a view's scope (every unit is in the whole archive's). */
function belongsTo(unit: Unit, scope: ViewScope | undefined): boolean {
  if (!scope) return true;
  if ('unitId' in scope) return unit.id === scope.unitId;
  const { city, county, town } = scope.subtree;
  return (
    unit.city === city && (county === undefined || unit.county === county) && (town === undefined || unit.town === town)
  );
}
