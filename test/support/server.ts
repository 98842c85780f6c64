import assert from 'node:assert/strict';
import http from 'node:http';
import {
  DEFAULT_LOGIN_THROTTLE,
  DEFAULT_PASSWORD_HASHING,
  DEFAULT_QUOTAS,
  DEFAULT_TOKENS_PER_ACCOUNT,
} from '../../server/limits.js';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Role } from '../../shared/schemas.js';
import { appDeps, composeServices, type Archive, type ServiceConfig } from '../../server/compose.js';
import { createApp } from '../../server/http/app.js';
import { answerUnparsableRequests } from '../../server/http/unparsable-requests.js';
import { createLogger } from '../../server/log.js';
import type { Account } from '../../server/store/accounts/port.js';
import type { TokenScope } from '../../shared/accounts.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import { ARCHIVE_UNIT_ID } from '../../shared/units.js';
import { ARCHIVE_UNIT, geographyOf } from '../../server/services/unit-directory.js';
import { checkBody, digestsFor, md5, sha256, unit } from './content.js';
import type { OpenedStore, StoreTarget } from './stores.js';
import { DEFAULT_SETTINGS } from '../../server/services/near-duplicates/fingerprint.js';

export const PASSWORD = 'correct horse battery';

/**
 * scrypt's N for the test servers' passwords: 2^10 (~3 ms a hash) rather than the archive's 2^15
 * (~110 ms), which was most of the HTTP tests' CPU time; still above the one-time passwords' 2^8,
 * so a login pads their check as in the archive. test/services/password-cost.test.ts holds the
 * archive's own cost.
 */
export const TEST_PASSWORD_COST = 2 ** 10;

export interface TestServerOptions extends Partial<ServiceConfig> {
  clock?: () => Date;
  /** What /api/ready is told about shutting down. */
  draining?: () => boolean;
  /** Puts something between the services and the store (to inject failures). */
  wrapStore?: (store: ArchiveStore) => ArchiveStore;
}

/** The services' settings the test servers run with: the defaults, over which `options` are laid. */
export function serviceConfig(options: Partial<ServiceConfig> = {}): ServiceConfig {
  return {
    maxFileSize: 20 * 1024 ** 3,
    sessionTtlMs: 3600_000,
    loginThrottle: DEFAULT_LOGIN_THROTTLE,
    passwordHashing: DEFAULT_PASSWORD_HASHING,
    quotas: DEFAULT_QUOTAS,
    tokensPerAccount: DEFAULT_TOKENS_PER_ACCOUNT,
    trustProxy: false,
    publicUrl: undefined,
    instantUploadScope: 'archive',
    claimTtlMs: 5 * 60_000,
    stagingTtlMs: 24 * 3600_000,
    withdrawDays: 30,
    trashDays: 30,
    uploadIdleMs: 24 * 3600_000,
    corsOrigins: [],
    metricsToken: undefined,
    verifyIntervalMs: 0,
    uploadStallMs: 30_000,
    nearDuplicateSettings: DEFAULT_SETTINGS,
    passwordCost: TEST_PASSWORD_COST,
    ...options,
    reportTimeZone: options.reportTimeZone ?? 'Asia/Shanghai',
  };
}

/** The services composed over a store as the server composes them (without HTTP), for service tests. */
export function composeArchive(store: ArchiveStore, options: Partial<ServiceConfig> = {}): Archive {
  return composeServices(store, serviceConfig(options));
}

export type { Archive };

/** A real listening server on 127.0.0.1 over a fresh store, with helpers to act as users. */
export class TestServer {
  private constructor(
    readonly url: string,
    /** Everything the server logged, for checks that secrets stay out of logs. */
    readonly logLines: string[],
    readonly opened: OpenedStore,
    readonly archive: Archive,
    private readonly close_: () => Promise<void>,
  ) {}

  static async start(target: StoreTarget, options: TestServerOptions = {}): Promise<TestServer> {
    const opened = await target.open();
    const config = serviceConfig(options);
    const store = options.wrapStore ? options.wrapStore(opened.store) : opened.store;
    const archive = composeServices(store, config, options.clock);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const app = createApp(appDeps(store, archive, config, createLogger('info', sink), options.draining));
    const server = app.listen(0, '127.0.0.1');
    answerUnparsableRequests(server);
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    return new TestServer(`http://127.0.0.1:${port}`, lines, opened, archive, async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await archive.digests.close();
      await archive.textReader.close();
      await opened.dispose();
    });
  }

  get store() {
    return this.opened.store;
  }

  close(): Promise<void> {
    return this.close_();
  }

  async addAccount(username: string, role: Role, unitId = 'unit-a', county = '青县'): Promise<Account> {
    return this.archive.services.accounts.create({ username, password: PASSWORD, role, unit: unit(unitId, county) });
  }

  /** An account in a unit of the directory (its code or id; `archive` for the whole archive). */
  async addAccountIn(username: string, role: Role, unitId: string): Promise<Account> {
    const { directory, accounts } = this.archive.services;
    const dir = unitId === ARCHIVE_UNIT_ID ? undefined : await directory.get(unitId);
    if (unitId !== ARCHIVE_UNIT_ID && !dir) throw new Error(`no unit ${unitId} in the directory`);
    const unit = dir ? geographyOf(dir) : ARCHIVE_UNIT;
    return accounts.create({ username, password: PASSWORD, role, unit });
  }

  /**
   * Two counties' clerks (clerk-qing of unit-a in 青县, clerk-xian of unit-b in 献县) and an
   * administrator of the archive; returns the administrator, logged in.
   */
  async addTwoCountiesAndAdmin(): Promise<Client> {
    await this.addAccount('clerk-qing', 'clerk', 'unit-a', '青县');
    await this.addAccount('clerk-xian', 'clerk', 'unit-b', '献县');
    await this.addAccount('admin', 'admin', 'archive');
    return this.login('admin');
  }

  /** A client logged in through POST /api/session, using the cookie and CSRF token like a browser. */
  async login(username: string, password = PASSWORD): Promise<Client> {
    const res = await fetch(`${this.url}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    if (res.status !== 201) throw new Error(`login of ${username} failed: ${res.status} ${await res.text()}`);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const { csrfToken } = (await res.json()) as { csrfToken: string };
    return new Client(this.url, { cookie, csrf: csrfToken });
  }

  /** Clients logged in as each of these accounts, and one anonymous. */
  async loginAll<N extends string>(usernames: readonly N[]): Promise<Record<N | 'anonymous', Client>> {
    const clients = [];
    for (const username of usernames) clients.push([username, await this.login(username)] as const);
    return { anonymous: this.anonymous(), ...Object.fromEntries(clients) } as Record<N | 'anonymous', Client>;
  }

  /** A client using an API token, like a script (with no scope unless given: uploading, reading, reports). */
  async tokenClient(account: Account, scopes: TokenScope[] = []): Promise<Client> {
    const { token } = await this.archive.services.tokens.create(account, { label: 'test', scopes });
    return new Client(this.url, { bearer: token });
  }

  anonymous(): Client {
    return new Client(this.url, {});
  }
}

export interface Credentials {
  cookie?: string;
  csrf?: string;
  bearer?: string;
}

export class Client {
  constructor(
    readonly url: string,
    readonly credentials: Credentials,
  ) {}

  /** fetch with this client's credentials; the CSRF token goes on every request, as the browser app will send it. */
  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.credentials.cookie) headers.set('cookie', this.credentials.cookie);
    if (this.credentials.csrf && !headers.has('x-csrf-token')) headers.set('x-csrf-token', this.credentials.csrf);
    if (this.credentials.bearer) headers.set('authorization', `Bearer ${this.credentials.bearer}`);
    return fetch(`${this.url}${path}`, { ...init, headers });
  }

  json(path: string, method: string, body: unknown): Promise<Response> {
    return this.fetch(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }

  upload(
    fileName: string,
    data: Uint8Array,
    fields: Record<string, string> = {},
    type = 'application/pdf',
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('file', new Blob([data], { type }), fileName);
    return this.fetch('/api/files', { method: 'POST', body: form, headers });
  }

  /**
   * A batch upload: each file with its digests in the manifest (`manifest` replaces it, to send
   * a wrong one).
   */
  batch(
    files: Array<{ name: string; data: Uint8Array; type?: string }>,
    manifest?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const form = new FormData();
    form.append(
      'manifest',
      JSON.stringify(manifest ?? files.map((f) => ({ md5: md5(f.data), sha256: sha256(f.data) }))),
    );
    for (const f of files) form.append('file', new Blob([f.data], { type: f.type ?? 'application/pdf' }), f.name);
    return this.fetch('/api/uploads/batch', { method: 'POST', body: form, headers });
  }

  /** The instant-upload handshake: check, and when the archive asks, prove with the bytes' ranges. */
  async instantUpload(data: Uint8Array, name = 'doc.pdf') {
    const check = await (await this.json('/api/uploads/check', 'POST', checkBody(data, name))).json();
    if (check.status !== 'prove') return { check };
    const res = await this.json('/api/uploads/prove', 'POST', {
      claimId: check.claimId,
      digests: digestsFor(data, check.ranges),
    });
    return { check, res, body: await res.json() };
  }
}

/** An answer's body, once its status is the one expected (else the test fails, showing the body). */
export async function body<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A GET with node:http, for headers fetch() would change. */
export function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (p: Buffer) => parts.push(p));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
      })
      .on('error', reject);
  });
}

declare global {
  // Test code reads JSON bodies without declaring every shape.
  interface Response {
    json(): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  }
}
