import type { Readable } from 'node:stream';
import { DataStore, Upload } from '@tus/utils';
import type { ResumableUploadService } from '../../services/resumable-uploads.js';
import type { Account } from '../../store/accounts/port.js';
import type { UploadState } from '../../store/uploads/port.js';

/**
 * Who is acting on which upload: @tus/server hands a data store only upload ids, so the route
 * records the authenticated caller for each upload a request touches, for as long as the
 * request runs. (An AsyncLocalStorage would do the same, but in Node 20 it makes every promise in
 * the process dearer: about 8% of the receiving thread in a 512 MiB upload.)
 */
export class UploadCallers {
  private readonly callers = new Map<string, { account: Account; address: string | null; requests: number }>();

  enter(id: string, account: Account, address: string | null): void {
    const caller = this.callers.get(id);
    // Only the owner gets this far for an existing upload; a new id is random.
    if (caller) caller.requests++;
    else this.callers.set(id, { account, address, requests: 1 });
  }

  leave(id: string): void {
    const caller = this.callers.get(id);
    if (caller && --caller.requests === 0) this.callers.delete(id);
  }

  accountFor(id: string): Account {
    return this.callerOf(id).account;
  }

  addressFor(id: string): string | null {
    return this.callerOf(id).address;
  }

  private callerOf(id: string) {
    const caller = this.callers.get(id);
    if (!caller) throw new Error(`no request is acting on upload ${id}`);
    return caller;
  }
}

/** tus extensions this server implements (advertised in `Tus-Extension`). */
export const TUS_EXTENSIONS = ['creation', 'creation-with-upload', 'termination', 'expiration'];

export function tusUpload(state: UploadState): Upload {
  return new Upload({
    id: state.id,
    size: state.length,
    offset: state.offset,
    metadata: state.metadata,
    // @tus/server computes expiry as creation_date + getExpiration(); ours runs from the last
    // activity, so that is the date it is given.
    creation_date: state.activeAt.toISOString(),
  });
}

/**
 * The tus data store over the archive: a thin adapter from the tus handlers' calls to the
 * resumable-upload service. The calling account comes from the callers the route records.
 */
export class ArchiveDataStore extends DataStore {
  override extensions = TUS_EXTENSIONS;

  constructor(
    private readonly uploads: ResumableUploadService,
    private readonly callers: UploadCallers,
  ) {
    super();
  }

  override async create(upload: Upload): Promise<Upload> {
    const state = await this.uploads.create(
      this.callers.accountFor(upload.id),
      { id: upload.id, length: upload.size!, metadata: upload.metadata ?? {} },
      this.callers.addressFor(upload.id),
    );
    return tusUpload(state);
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    return this.uploads.receive(this.callers.accountFor(id), id, offset, stream, this.callers.addressFor(id));
  }

  override async getUpload(id: string): Promise<Upload> {
    return tusUpload(await this.uploads.ownedBy(this.callers.accountFor(id), id));
  }

  override async remove(id: string): Promise<void> {
    await this.uploads.ownedBy(this.callers.accountFor(id), id);
    await this.uploads.terminate(id);
  }

  override async deleteExpired(): Promise<number> {
    return this.uploads.expire();
  }

  override getExpiration(): number {
    return this.uploads.idleMs;
  }
}
