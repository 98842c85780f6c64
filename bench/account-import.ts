import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { divisionsOf } from '../server/services/divisions.js';
import { hashPassword } from '../server/services/password.js';
import { openEmbeddedStore } from '../server/store/embedded.js';
import { UnitDirectory } from '../server/services/unit-directory.js';
import { startBenchServer } from './server.js';

export interface AccountImportResult {
  rows: number;
  /** POST /api/accounts/import of `rows` new clerks, from sending to the last byte of the answer (ms). */
  importMs: number;
  /** One login of the top-level administrator (a standard password's hash checked), the reference (ms). */
  loginMs: number;
}

const PROVINCE = '13';

/**
 * A CSV account import over HTTP by a top-level administrator: `rows` clerks spread over the towns
 * of one province (Hebei), into the embedded store (issue 39: 300 rows took 33.7 s).
 */
export async function benchAccountImport(rows: number): Promise<AccountImportResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-import-'));
  try {
    const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
    await new UnitDirectory({ units: store.units, accounts: store.accounts, jobs: store.jobs }).load([PROVINCE]);
    await store.accounts.create({
      id: 'bench-top',
      username: 'top',
      displayName: null,
      passwordHash: await hashPassword('bench password 1'),
      role: 'admin',
      unit: { id: 'archive', geoType: 'city', city: 'Archive' },
      createdAt: new Date(),
      mustChangePassword: false,
      disabled: false,
      lastLoginAt: null,
    });
    await store.close();
    const towns = divisionsOf([PROVINCE]).filter((u) => u.level === 'town');
    const csv = ['用户名,角色,单位代码,姓名']
      .concat(Array.from({ length: rows }, (_, i) => `imported${i},档案员,${towns[i % towns.length]!.id},职员${i}`))
      .join('\r\n');

    const server = await startBenchServer({
      DATA_DIR: dataDir,
      STORE: 'embedded',
      MONGODB_URI: '',
      UNIT_REGIONS: PROVINCE,
    });
    try {
      let start = performance.now();
      const login = await fetch(`${server.url}/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'top', password: 'bench password 1' }),
      });
      const { csrfToken } = (await login.json()) as { csrfToken: string };
      const loginMs = performance.now() - start;
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      start = performance.now();
      const res = await fetch(`${server.url}/api/accounts/import`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'text/csv', 'x-csrf-token': csrfToken },
        body: csv,
      });
      const answer = await res.text();
      const importMs = performance.now() - start;
      if (res.status !== 201) throw new Error(`import: ${res.status} ${answer.slice(0, 500)}`);
      const lines = answer.trim().split(/\r?\n/).length - 1;
      if (lines !== rows) throw new Error(`import: ${lines} accounts in the answer, ${rows} sent`);
      return { rows, importMs, loginMs };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
