import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { loadConfig } from '../server/config.js';
import { Fingerprinter, type NearDuplicateSettings } from '../server/services/near-duplicates/fingerprint.js';
import { cli, EMBEDDED_STORE, runServerToExit, startServer, stopServer } from './support/process.js';
import { keyOf, readAll, stageBytes } from './support/content.js';
import { openEmbeddedAt, tempDir } from './support/stores.js';
import { NOTICE, NOTICE_FROM_THE_WEB } from './support/texts.js';
import { until } from './support/until.js';

describe('starting the service and the archive command', () => {
  const dataDir = tempDir();
  // The default set-up: the embedded store, even when the test run itself has a MongoDB.
  const env = { DATA_DIR: dataDir, ...EMBEDDED_STORE };
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  let firstPassword: string;
  before(async () => {
    const s = await startServer(env);
    try {
      firstPassword =
        /one-time password: (\S+)/.exec(s.stdout)?.[1] ?? assert.fail(`no one-time password in: ${s.stdout}`);
    } finally {
      assert.equal(await stopServer(s), 0);
    }
  });

  it('prints a one-time admin password on an empty store, once, and it works for logging in', async () => {
    const s = await startServer(env);
    try {
      assert.doesNotMatch(s.stdout, /one-time password/);
      // An operator sees the store being opened (an upgrade of its tables can take a while) and how long it took.
      assert.match(s.stdout, /"store":"embedded".*opening the store[\s\S]*"ms":\d+.*store opened/);
      assert.equal((await fetch(`${s.url}/api/health`)).status, 200);
      const res = await fetch(`${s.url}/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: firstPassword }),
      });
      assert.equal(res.status, 201);
      assert.equal((await res.json()).mustChangePassword, true);
    } finally {
      assert.equal(await stopServer(s), 0, 'a graceful stop exits 0');
    }
  });

  it('adds a clerk with the password from standard input, lists it, and makes a working API token', async () => {
    // Place names and token labels are typed names: normalised (NFC, trimmed) as the API's are.
    const add = cli(
      [
        'user',
        'add',
        '李四',
        '--role',
        'clerk',
        '--unit',
        'qx-cg',
        '--city',
        ' 沧州市 ',
        '--county',
        '\uFEFF青县',
        '--town',
        '城关镇',
        '--lng',
        '116.8',
        '--lat',
        '38.6',
      ],
      env,
      'a long password\n',
    );
    assert.equal(add.status, 0, add.stderr);
    assert.match(add.stdout, /created clerk 李四/);
    const list = cli(['user', 'list'], env);
    // Names that no loaded division has become units of the directory (custom ones).
    assert.match(list.stdout, /李四\tclerk\tu[0-9a-z]{12}\t沧州市 \/ 青县 \/ 城关镇/);

    const created = cli(['token', 'create', '李四', '--label', ' scanner\u2028'], env);
    assert.equal(created.status, 0, created.stderr);
    const token = created.stdout.trim().split('\n').pop()!;
    assert.match(token, /^adt_[0-9a-f]{12}_[\w-]{43}$/);
    const tokenId = token.split('_')[1]!;
    assert.match(cli(['token', 'list'], env).stdout, new RegExp(`${tokenId}\t李四\t.*\tscanner`));

    const s = await startServer(env);
    try {
      const form = new FormData();
      form.append('file', new Blob(['hello archive']), '通知.txt');
      const res = await fetch(`${s.url}/api/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
      assert.equal(res.status, 201);
      const revoked = cli(['token', 'revoke', tokenId], env);
      assert.equal(revoked.status, 0, revoked.stderr);
      assert.equal((await fetch(`${s.url}/api/files`, { headers: { authorization: `Bearer ${token}` } })).status, 401);
    } finally {
      await stopServer(s);
    }
  });

  it("makes an administrator's token that may keep accounts only when --scopes says so", async (t) => {
    // An archive of its own: the audit log's test below reads this one's events in full.
    const own = { DATA_DIR: tempDir(), ...EMBEDDED_STORE };
    t.after(() => fs.rmSync(own.DATA_DIR, { recursive: true, force: true }));
    const add = cli(['user', 'add', 'keeper', '--role', 'admin', '--unit', 'archive'], own, 'a long password\n');
    assert.equal(add.status, 0, add.stderr);
    const make = (...more: string[]) => {
      const r = cli(['token', 'create', 'keeper', ...more], own);
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.trim().split('\n').pop()!;
    };
    const plain = make();
    const scoped = make('--scopes', 'accounts, tokens');
    assert.match(
      cli(['token', 'list'], own).stdout,
      new RegExp(`${scoped.split('_')[1]}\tkeeper\t.*\taccounts,tokens$`, 'm'),
    );
    const s = await startServer(own);
    try {
      const create = (token: string, username: string) =>
        fetch(`${s.url}/api/accounts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ username, role: 'admin', unitId: 'archive' }),
        });
      const refused = await create(plain, 'by-plain');
      assert.equal(refused.status, 403);
      assert.equal((await refused.json()).error, 'token_scope_missing');
      assert.equal((await create(scoped, 'by-scoped')).status, 201);
    } finally {
      await stopServer(s);
    }
  });

  it("resets a password from standard input, revoking the account's API tokens; the account must change it at next login", async () => {
    const token = cli(['token', 'create', '李四'], env).stdout.trim().split('\n').pop()!;
    const reset = cli(['user', 'password', '李四'], env, 'temporary password 1');
    assert.equal(reset.status, 0, reset.stderr);
    assert.match(reset.stdout, /its sessions were ended and its 1 API token\(s\) revoked/);
    assert.doesNotMatch(cli(['token', 'list'], env).stdout, new RegExp(token.split('_')[1]!));
    const s = await startServer(env);
    try {
      const res = await fetch(`${s.url}/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: '李四', password: 'temporary password 1' }),
      });
      assert.equal((await res.json()).mustChangePassword, true);
    } finally {
      await stopServer(s);
    }
  });

  it('leaves what it did to accounts and tokens in the audit log, and so does the first start', async () => {
    const store = openEmbeddedAt(dataDir);
    try {
      const { items } = await store.audit.search({ limit: 100, offset: 0 });
      const mine = items
        .filter((e) => ['account_created', 'token_created', 'token_revoked', 'password_reset'].includes(e.action))
        .reverse();
      assert.deepEqual(
        mine.map((e) => [e.action, e.userName, e.address]),
        [
          ['account_created', 'admin', null],
          ['account_created', '李四', null],
          ['token_created', '李四', null],
          ['token_revoked', '李四', null],
          ['token_created', '李四', null],
          ['password_reset', '李四', null],
        ],
      );
      assert.match(mine[5]!.detail, /sessions ended, 1 API token revoked$/);
      assert.match(mine[2]!.detail, /\(scanner\), by the archive command/);
      assert.equal(mine[1]!.unit?.town, '城关镇');
    } finally {
      await store.close();
    }
  });

  it('sweeps abandoned uploads while it runs', async () => {
    const store = openEmbeddedAt(dataDir);
    const abandoned = await store.content.stage(new Date(Date.now() - 2 * 3600_000));
    await store.content.write(abandoned, 0, [randomBytes(1000)]);
    await store.close();
    const file = path.join(dataDir, 'content', abandoned.slice(0, 2), abandoned.slice(2, 4), abandoned);
    assert.ok(fs.existsSync(file));
    const s = await startServer({ ...env, STAGING_TTL_HOURS: '1', GC_INTERVAL_SECONDS: '1' });
    try {
      await until(() => !fs.existsSync(file), 'the sweeper removed the abandoned upload');
    } finally {
      await stopServer(s);
    }
  });

  it('collects garbage on demand', () => {
    const gc = cli(['gc'], env);
    assert.equal(gc.status, 0, gc.stderr);
    assert.match(gc.stdout, /removed 0 expired upload\(s\), 0 abandoned staging area\(s\) and 0 unowned file\(s\)/);
  });

  it('compacts with `gc` a pack of batch uploads half of which is duplicates, once it is idle past STAGING_TTL_HOURS', async () => {
    const contents = [randomBytes(3000), randomBytes(5000)];
    const batch = () =>
      contents.map((data) => ({
        parts: [data],
        entry: { key: keyOf(data), fileName: 'p.jpg', contentType: 'image/jpeg', uploadDate: new Date() },
      }));
    let store = openEmbeddedAt(dataDir);
    const entries = (await store.content.storeMany(batch())).map((o) => o.entry);
    await store.content.storeMany(batch()); // duplicates: 8,000 bytes nothing locates
    await store.close();
    const ttlEnv = { ...env, STAGING_TTL_HOURS: '1' };
    assert.match(cli(['gc'], ttlEnv).stdout, /compacted 0 pack\(s\), 0 byte\(s\) given back/, 'written to lately');
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    db.prepare('UPDATE packs SET written_at = ?').run(Date.now() - 2 * 3600_000);
    db.close();
    const gc = cli(['gc'], ttlEnv);
    assert.equal(gc.status, 0, gc.stderr);
    assert.match(gc.stdout, /compacted 1 pack\(s\), 8000 byte\(s\) given back/);
    store = openEmbeddedAt(dataDir);
    for (const [k, data] of contents.entries()) assert.deepEqual(await readAll(store.content.read(entries[k]!)), data);
    await store.close();
  });

  it('fingerprints the queued files with `near-duplicates run` (reading them on a thread of its own) and says what it found', async () => {
    const store = openEmbeddedAt(dataDir);
    for (const [name, text] of [
      ['通知.txt', NOTICE],
      ['通知-网页版.txt', NOTICE_FROM_THE_WEB],
    ] as const) {
      const staged = await stageBytes(store, Buffer.from(text));
      const { entry } = await store.content.commit(staged.stagingId, {
        key: staged.key,
        fileName: name,
        contentType: 'text/plain',
        uploadDate: new Date(),
      });
      await store.fingerprintQueue.enqueue([entry.fileId], new Date());
    }
    await store.close();
    const run = cli(['near-duplicates', 'run', '--json'], env);
    assert.equal(run.status, 0, run.stderr);
    const status = JSON.parse(run.stdout.trim().split('\n').pop()!);
    assert.deepEqual(
      { pairs: status.pairs, queued: status.queued, running: status.running, failed: status.failed },
      { pairs: 1, queued: 0, running: 0, failed: 0 },
    );
    assert.ok(status.fingerprinted >= 2);
    assert.match(cli(['near-duplicates', 'status'], env).stdout, /1 near-duplicate pair\(s\); 0 waiting/);
  });

  it('explains mistakes in one line with exit code 2', () => {
    const cases: Array<[string[], string | undefined, RegExp]> = [
      [['user', 'add', 'x', '--role', 'clerk', '--city', 'c'], 'a long password', /--unit <unit-id> is required/],
      [['user', 'add', 'x', '--role', 'clerk', '--unit', 'u'], 'a long password', /No unit has the code or id "u"/],
      [
        ['user', 'add', 'x', '--role', 'boss', '--unit', 'u', '--city', 'c'],
        'a long password',
        /--role must be clerk or admin/,
      ],
      [['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', 'c'], '', /No password on standard input/],
      [['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', 'c'], 'short', /at least 10 characters/],
      [
        ['user', 'add', 'wangwu', '--role', 'clerk', '--unit', 'u', '--city', 'c'],
        'WangWu-2026-!!',
        /must not contain the username/,
      ],
      [['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', 'c'], '1234567890', /most common/],
      [['user', 'add', '李四', '--role', 'clerk', '--unit', 'u', '--city', 'c'], 'a long password', /taken/],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', 'c', '--town', 't'],
        'a long password',
        /--town needs --county/,
      ],
      [['token', 'create', 'nobody'], undefined, /No account is named "nobody"/],
      [['token', 'revoke', 'ffffffffffff'], undefined, /No API token/],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', '\u200B\u2028'],
        'a long password',
        /^archive: --city: a name has no control or invisible characters .*character 1 is U\+200B/,
      ],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', 'c', '--county', ' \uFEFF'],
        'a long password',
        /^archive: --county: a name is needed/,
      ],
      [
        ['user', 'add', '\u3164', '--role', 'clerk', '--unit', 'u', '--city', 'c'],
        'a long password',
        /a username is 1 to 64 letters/,
      ],
      [
        ['user', 'add', '王\u200B五', '--role', 'clerk', '--unit', 'u', '--city', 'c'],
        'a long password',
        /a username is 1 to 64 letters/,
      ],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', '130922100'],
        'a long password',
        /No unit has the code or id "130922100"/,
      ],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', 'archive'],
        'a long password',
        /Only administrators belong to the whole archive/,
      ],
      [['user', 'add', 'x', '--role', 'clerk'], 'a long password', /--unit <code> is required/],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', 'c', '--name', '长'.repeat(51)],
        'a long password',
        /--name: a name is at most 50 characters/,
      ],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', 'c', '--name', '张\u202E三'],
        'a long password',
        /--name: a name has no control or invisible characters/,
      ],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', 'c', '--name', '\u3164\u3164'],
        'a long password',
        /--name: a name has no control or invisible characters .*character 1 is U\+3164/,
      ],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', '沧州\u200B市'],
        'a long password',
        /--city: a name has no control or invisible characters .*character 3 is U\+200B/,
      ],
      [
        ['user', 'add', 'x', '--role', 'clerk', '--unit', 'u', '--city', '沧州市', '--county', '青县∕清州镇'],
        'a long password',
        /--county: a unit name has no "\/" or character drawn like it.*U\+2215/,
      ],
      [
        ['token', 'create', '李四', '--label', 'scan\u202Ener'],
        undefined,
        /--label: a name has no control or invisible characters .*character 5 is U\+202E/,
      ],
      [['token', 'create', '李四', '--days', '0'], undefined, /--days is a whole number of days/],
      [
        ['token', 'create', '李四', '--scopes', 'tokens,admin'],
        undefined,
        /--scopes takes tokens and\/or accounts.*"admin"/,
      ],
      [
        ['token', 'create', '李四', '--scopes', 'accounts'],
        undefined,
        /Only administrators’ tokens may have the "accounts" scope/,
      ],
      [['units', 'find'], undefined, /units find needs a name/],
      [['user', 'remove', 'x'], undefined, /unknown command/],
      [['user', 'list', '--colour'], undefined, /Unknown option/],
    ];
    for (const [args, input, message] of cases) {
      const r = cli(args, env, input);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });

  it('refuses bad configuration with one clear line and a non-zero exit', () => {
    const badPort = runServerToExit({ ...env, PORT: 'abc' });
    assert.equal(badPort.status, 2);
    assert.match(badPort.stderr, /^archive: invalid setting PORT/);
    const file = path.join(dataDir, 'not-a-dir');
    fs.writeFileSync(file, '');
    const badDir = runServerToExit({ ...env, DATA_DIR: file });
    assert.equal(badDir.status, 2);
    assert.match(badDir.stderr, /^archive: DATA_DIR .* is not a writable directory/);
    const badUri = runServerToExit({ MONGODB_URI: 'http://x' });
    assert.equal(badUri.status, 2);
    assert.match(badUri.stderr, /MONGODB_URI must start with mongodb:\/\//);
    const badZone = runServerToExit({ ...env, REPORT_TIME_ZONE: 'Beijing' });
    assert.equal(badZone.status, 2);
    assert.match(
      badZone.stderr,
      /^archive: invalid setting REPORT_TIME_ZONE: REPORT_TIME_ZONE is an IANA time zone such as Asia\/Shanghai/,
    );
    const farHamming = runServerToExit({ ...env, NEAR_DUPLICATE_MAX_HAMMING: '4' });
    assert.equal(farHamming.status, 2);
    assert.match(
      farHamming.stderr,
      /^archive: invalid setting NEAR_DUPLICATE_MAX_HAMMING: the SimHash index finds fingerprints within 3 bits at most/,
    );
    const retired = runServerToExit({ ...env, LOGIN_MAX_FAILURES: '5' });
    assert.equal(retired.status, 2, 'the lock-out settings are refused, not silently ignored');
    assert.match(
      retired.stderr,
      /^archive: invalid setting LOGIN_MAX_FAILURES: this setting was retired; see LOGIN_FREE_FAILURES/,
    );
    const lowJaccard = runServerToExit({ ...env, NEAR_DUPLICATE_MIN_JACCARD: '0.1' });
    assert.equal(lowJaccard.status, 2);
    assert.match(lowJaccard.stderr, /^archive: invalid setting NEAR_DUPLICATE_MIN_JACCARD: a similarity from 0.3 to 1/);
  });

  it('will not start the server or the archive command on a STORE that MONGODB_URI contradicts or lacks', () => {
    const unreachable = 'mongodb://127.0.0.1:1/archive';
    for (const [settings, message] of [
      [{ STORE: 'mongodb', MONGODB_URI: '' }, /^archive: STORE=mongodb needs MONGODB_URI, the MongoDB to run on/],
      [
        { STORE: 'embedded', MONGODB_URI: unreachable },
        /^archive: STORE=embedded and MONGODB_URI choose different stores: remove MONGODB_URI .*, or remove STORE/,
      ],
      [{ STORE: 'sqlite', MONGODB_URI: '' }, /^archive: invalid setting STORE: STORE is embedded or mongodb\n$/],
    ] as const) {
      const server = runServerToExit({ ...env, ...settings });
      assert.equal(server.status, 2, `server, ${JSON.stringify(settings)}: ${server.stderr}`);
      assert.match(server.stderr, message);
      assert.doesNotMatch(server.stdout, /opening the store/, 'refused before any store is opened');
      const command = cli(['user', 'list'], { ...env, ...settings });
      assert.equal(command.status, 2, `archive user list, ${JSON.stringify(settings)}: ${command.stderr}`);
      assert.match(command.stderr, message);
    }
    // MONGODB_URI alone still chooses MongoDB, as before STORE existed; STORE=mongodb says so outright.
    for (const store of ['', 'mongodb']) {
      const r = runServerToExit({ ...env, STORE: store, MONGODB_URI: unreachable, STORE_CONNECT_TIMEOUT_SECONDS: '0' });
      assert.equal(r.status, 2, `STORE=${store}: ${r.stderr}`);
      assert.match(r.stdout, /"store":"mongodb".*opening the store/, `STORE=${store}`);
      assert.match(r.stderr, /^archive: cannot reach MongoDB at MONGODB_URI/, `STORE=${store}`);
    }
  });

  it('reads PUBLIC_URL as an address without query or fragment, relative upload URLs without it', () => {
    assert.equal(loadConfig({}).publicUrl, undefined);
    assert.equal(loadConfig({ PUBLIC_URL: 'https://archive.example.gov/' }).publicUrl, 'https://archive.example.gov');
    assert.equal(loadConfig({ PUBLIC_URL: 'http://10.0.0.5:8080/records/' }).publicUrl, 'http://10.0.0.5:8080/records');
    for (const bad of [
      'archive.example.gov',
      'ftp://archive.example.gov',
      'https://archive.example.gov/?x=1',
      'https://a b',
    ]) {
      assert.throws(
        () => loadConfig({ PUBLIC_URL: bad }),
        /invalid setting PUBLIC_URL: PUBLIC_URL is the address clerks open/,
        bad,
      );
    }
  });

  it('reads the near-duplicate thresholds; the fingerprinter uses its defaults where unset', async () => {
    const thresholds = ({ maxHamming, minJaccard, minContainment, minShortJaccard }: NearDuplicateSettings) => ({
      maxHamming,
      minJaccard,
      minContainment,
      minShortJaccard,
    });
    assert.deepEqual(loadConfig({}).nearDuplicateSettings, {});
    assert.deepEqual(thresholds((await Fingerprinter.create(loadConfig({}).nearDuplicateSettings)).settings), {
      maxHamming: 3,
      minJaccard: 0.8,
      minContainment: 0.85,
      minShortJaccard: 0.5,
    });
    const set = {
      NEAR_DUPLICATE_MAX_HAMMING: '2',
      NEAR_DUPLICATE_MIN_JACCARD: '0.9',
      NEAR_DUPLICATE_MIN_CONTAINMENT: '0.9',
      NEAR_DUPLICATE_MIN_SHORT_JACCARD: '0.6',
    };
    assert.deepEqual(loadConfig(set).nearDuplicateSettings, {
      maxHamming: 2,
      minJaccard: 0.9,
      minContainment: 0.9,
      minShortJaccard: 0.6,
    });
    assert.deepEqual(thresholds((await Fingerprinter.create(loadConfig(set).nearDuplicateSettings)).settings), {
      maxHamming: 2,
      minJaccard: 0.9,
      minContainment: 0.9,
      minShortJaccard: 0.6,
    });
  });
});

describe('the archive command and the unit directory', () => {
  const dataDir = tempDir();
  const earlier = { DATA_DIR: dataDir, ...EMBEDDED_STORE };
  const hebei = { ...earlier, UNIT_REGIONS: '13' };
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('places accounts of an earlier version in the directory once it is loaded, and lists those it cannot place', async () => {
    // Before the directory (no UNIT_REGIONS), as an earlier version did: free-text units.
    const store = openEmbeddedAt(dataDir);
    const legacy = (username: string, unit: Record<string, string>) =>
      store.accounts.create({
        id: `legacy-${username}`,
        username,
        passwordHash: 'scrypt$x',
        role: 'clerk',
        unit: { id: 'old-id', geoType: 'town', city: '沧州市', ...unit },
        createdAt: new Date(),
        mustChangePassword: false,
        disabled: false,
        lastLoginAt: null,
        displayName: null,
      });
    await legacy('qingzhou', { county: '青县', town: '清州镇' });
    await legacy('cangzhou', {});
    await legacy('nowhere', { county: '青县', town: '无此镇' });
    await store.close();

    const unmapped = cli(['units', 'unmapped'], hebei);
    assert.equal(unmapped.status, 0, unmapped.stderr);
    assert.match(unmapped.stdout, /^nowhere\tclerk\told-id\t沧州市 \/ 青县 \/ 无此镇$/m);
    assert.match(unmapped.stdout, /1 account\(s\) to assign a unit/);
    const list = cli(['user', 'list'], hebei).stdout;
    assert.match(list, /^qingzhou\tclerk\t130922100\t沧州市 \/ 青县 \/ 清州镇\t$/m);
    assert.match(list, /^cangzhou\tclerk\t130900\t沧州市\t$/m);
  });

  it('adds an account in a unit given by its code, and one given by names the directory has', () => {
    const found = cli(['units', 'find', '清州'], hebei);
    assert.match(found.stdout, /^130922100\ttown\t河北省 \/ 沧州市 \/ 青县 \/ 清州镇$/m);
    const byCode = cli(
      ['user', 'add', 'zhang', '--role', 'clerk', '--unit', '130922101', '--name', ' 张三 '],
      hebei,
      'a long password',
    );
    assert.equal(byCode.status, 0, byCode.stderr);
    assert.match(
      byCode.stdout,
      /^created clerk zhang named 张三 \(id .*\) in unit 130922101 \(沧州市 \/ 青县 \/ 金牛镇\)$/m,
    );
    assert.match(cli(['user', 'list'], hebei).stdout, /^zhang\tclerk\t130922101\t沧州市 \/ 青县 \/ 金牛镇\t张三$/m);
    // The flags of earlier versions: the names, down to a village the directory lacks.
    const addByNames = (username: string) =>
      cli(
        ['user', 'add', username, '--role', 'clerk', '--unit', 'qx', '--city', '沧州市', '--county', '青县'].concat([
          '--town',
          '金牛镇',
          '--street',
          '东街村',
        ]),
        hebei,
        'a long password',
      );
    const byNames = addByNames('li');
    assert.equal(byNames.status, 0, byNames.stderr);
    assert.match(byNames.stdout, /in unit u[0-9a-z]{12} \(沧州市 \/ 青县 \/ 金牛镇 \/ 东街村\)/);
    const again = addByNames('li2');
    assert.equal(
      /in unit (\S+)/.exec(again.stdout)?.[1],
      /in unit (\S+)/.exec(byNames.stdout)?.[1],
      'the same names, the same unit',
    );
    const province = cli(['user', 'add', 'prov', '--role', 'admin', '--unit', '130000'], hebei, 'a long password');
    assert.equal(province.status, 2);
    assert.match(province.stderr, /An administrator of a whole province belongs to the archive itself/);
    const top = cli(['user', 'add', 'boss', '--role', 'admin', '--unit', 'archive'], hebei, 'a long password');
    assert.equal(top.status, 0, top.stderr);
    // As scripts of earlier versions made the archive's own administrators: the names are not a unit.
    const named = cli(
      ['user', 'add', 'boss2', '--role', 'admin', '--unit', 'archive', '--city', 'Archive'],
      hebei,
      'a long password',
    );
    assert.match(named.stdout, /in unit archive \(Archive\)/);
    const expiring = cli(['token', 'create', 'zhang', '--days', '30'], hebei);
    assert.equal(expiring.status, 0, expiring.stderr);
  });

  it('refuses a province code that does not exist, naming the codes', () => {
    const r = runServerToExit({ ...earlier, UNIT_REGIONS: '13,99' });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /UNIT_REGIONS: 99 is not a province code; the codes are 11 北京市/);
    const format = runServerToExit({ ...earlier, UNIT_REGIONS: 'hebei' });
    assert.match(format.stderr, /two-digit province codes/);
  });
});
