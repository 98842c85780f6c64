import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Readable } from 'node:stream';
import { DataStore, Upload } from '@tus/utils';
import type { ResumableUploadService } from '../../services/resumable-uploads.js';
import type { Account, UploadState } from '../../store/port.js';

/** What the tus handlers cannot pass to a data store: who is asking. */
export interface TusRequestContext {
  account: Account;
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
 * resumable-upload service. The handlers do not pass the request to a store, so the calling
 * account comes from the request context the route sets.
 */
export class ArchiveDataStore extends DataStore {
  override extensions = TUS_EXTENSIONS;

  constructor(
    private readonly uploads: ResumableUploadService,
    private readonly context: AsyncLocalStorage<TusRequestContext>,
  ) {
    super();
  }

  private account(): Account {
    const context = this.context.getStore();
    if (!context) throw new Error('tus data store called outside a request');
    return context.account;
  }

  override async create(upload: Upload): Promise<Upload> {
    const state = await this.uploads.create(this.account(), { id: upload.id, length: upload.size!, metadata: upload.metadata ?? {} });
    return tusUpload(state);
  }

  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    return this.uploads.receive(this.account(), id, offset, stream);
  }

  override async getUpload(id: string): Promise<Upload> {
    return tusUpload(await this.uploads.ownedBy(this.account(), id));
  }

  override async remove(id: string): Promise<void> {
    await this.uploads.ownedBy(this.account(), id);
    await this.uploads.terminate(id);
  }

  override async deleteExpired(): Promise<number> {
    return this.uploads.expire();
  }

  override getExpiration(): number {
    return this.uploads.idleMs;
  }
}
