import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import vm from 'node:vm';
import { readRepoFile } from './files.js';

const SCRIPT = readRepoFile('deploy/mongo/init-replica-set.js');
const PASSWORDS = {
  MONGO_ADMIN_PASSWORD: 'a0a0a0a0a0a0a0a0a0a0',
  ARCHIVE_DB_PASSWORD: 'b1b1b1b1b1b1b1b1b1b1',
  MONGO_BACKUP_PASSWORD: 'c2c2c2c2c2c2c2c2c2c2',
};

interface User {
  pwd: string;
  roles: { role: string; db: string }[];
}

/** A copy made in this realm: the script's objects have the sandbox's prototypes. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

class MongoError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Three members as mongosh sees them from mongo1's localhost, with access control: "hello"
 * answers without a login; anything else needs one once a user exists (the localhost exception).
 */
class FakeReplicaSet {
  initiated = false;
  /** "hello" calls answered without the set name, as by a member still loading its configuration. */
  helloWithoutSetName = 0;
  users = new Map<string, User>(); // "db.user"
  initiateCalls = 0;
  log: string[] = [];

  hello(): Record<string, unknown> {
    if (!this.initiated || this.helloWithoutSetName > 0) {
      this.helloWithoutSetName = Math.max(0, this.helloWithoutSetName - 1);
      return { ok: 1, isWritablePrimary: false };
    }
    return { ok: 1, setName: 'rs0', primary: 'mongo1:27017', isWritablePrimary: true };
  }

  connect(uri: string) {
    this.log.push(`connect ${uri}`);
    let authenticated = false;
    const requireLogin = (what: string) => {
      if (this.users.size > 0 && !authenticated) throw new MongoError(13, `command ${what} requires authentication`);
    };
    return {
      getDB: (dbName: string) => {
        return {
          runCommand: (command: Record<string, unknown>) => {
            if ('hello' in command) return this.hello();
            if ('replSetInitiate' in command) {
              this.initiateCalls++;
              requireLogin('replSetInitiate');
              if (this.initiated) throw new MongoError(23, 'already initialized');
              this.initiated = true;
              return { ok: 1 };
            }
            throw new Error(`unexpected command ${JSON.stringify(command)}`);
          },
          auth: (user: string, pwd: string) => {
            if (this.users.get(`${dbName}.${user}`)?.pwd !== pwd) throw new MongoError(18, 'Authentication failed.');
            authenticated = true;
            return { ok: 1 };
          },
          createUser: ({ user, pwd, roles }: { user: string } & User) => {
            requireLogin('createUser');
            this.users.set(`${dbName}.${user}`, plain({ pwd, roles }));
          },
          getUser: (user: string) => {
            requireLogin('usersInfo');
            return this.users.get(`${dbName}.${user}`) ?? null;
          },
          updateUser: (user: string, { pwd, roles }: User) => {
            requireLogin('updateUser');
            this.users.set(`${dbName}.${user}`, plain({ pwd, roles }));
          },
        };
      },
    };
  }
}

class Quit extends Error {
  constructor(readonly code: number) {
    super(`quit(${code})`);
  }
}

/** Runs the script as mongo-init does, with the passwords as secret files; its exit code and output. */
function runInit(
  set: FakeReplicaSet,
  passwords: Partial<typeof PASSWORDS> = PASSWORDS,
  extraEnv: Record<string, string> = {},
) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mongo-init-'));
  const env: Record<string, string> = { ...extraEnv };
  for (const [name, value] of Object.entries(passwords)) {
    fs.writeFileSync(path.join(dir, name), `${value}\n`); // as "echo" would write it
    env[`${name}_FILE`] = path.join(dir, name);
  }
  for (const name of Object.keys(PASSWORDS)) env[`${name}_FILE`] ??= path.join(dir, `missing-${name}`);
  const output: string[] = [];
  let now = 0;
  const context = vm.createContext({
    print: (line: string) => output.push(line),
    quit: (code: number) => {
      throw new Quit(code);
    },
    sleep: (ms: number) => (now += ms),
    Date: { now: () => now },
    Mongo: function Mongo(uri: string) {
      return set.connect(uri);
    },
    process: { env },
    require: createRequire(import.meta.url),
  });
  let code = 0;
  try {
    vm.runInContext(SCRIPT, context);
  } catch (err) {
    if (!(err instanceof Quit)) throw err;
    code = err.code;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { code, output, waitedMs: now };
}

describe('deploy/mongo/init-replica-set.js', () => {
  it('on the first start initiates rs0 and makes the administrator, the archive user and the backup user', () => {
    const set = new FakeReplicaSet();
    const { code, output } = runInit(set);
    assert.equal(code, 0, output.join('\n'));
    assert.equal(set.initiated, true);
    assert.deepEqual(set.users.get('admin.admin'), {
      pwd: PASSWORDS.MONGO_ADMIN_PASSWORD,
      roles: [{ role: 'root', db: 'admin' }],
    });
    assert.deepEqual(set.users.get('archive.archive'), {
      pwd: PASSWORDS.ARCHIVE_DB_PASSWORD,
      roles: [{ role: 'readWrite', db: 'archive' }],
    });
    // mongodump --oplog needs "backup", mongorestore --oplogReplay "restore".
    assert.deepEqual(set.users.get('admin.backup'), {
      pwd: PASSWORDS.MONGO_BACKUP_PASSWORD,
      roles: [
        { role: 'backup', db: 'admin' },
        { role: 'restore', db: 'admin' },
      ],
    });
    assert.ok(output.includes('rs0: user "backup" created'), output.join('\n'));
  });

  it('on a restart before mongo1 reports its set name, waits for it instead of failing', () => {
    const set = new FakeReplicaSet();
    assert.equal(runInit(set).code, 0);
    // Restarted: the set and its users exist, but mongo1 has not loaded its configuration yet,
    // and the unauthenticated replSetInitiate is refused with "Unauthorized" (13).
    set.helloWithoutSetName = 5;
    const { code, output, waitedMs } = runInit(set);
    assert.equal(code, 0, output.join('\n'));
    assert.equal(set.initiateCalls, 2, 'tried once per start');
    assert.ok(waitedMs >= 1000, 'waited for the set name');
    assert.ok(output.includes('rs0: user "archive" up to date'), output.join('\n'));
    assert.ok(output.includes('rs0: user "backup" up to date'), output.join('\n'));
  });

  it("sets the users' passwords to those of .env on every start", () => {
    const set = new FakeReplicaSet();
    runInit(set);
    const changed = {
      ...PASSWORDS,
      ARCHIVE_DB_PASSWORD: 'd3d3d3d3d3d3d3d3d3d3',
      MONGO_BACKUP_PASSWORD: 'e4e4e4e4e4e4e4e4e4e4',
    };
    assert.equal(runInit(set, changed).code, 0);
    assert.equal(set.users.get('archive.archive')?.pwd, changed.ARCHIVE_DB_PASSWORD);
    assert.equal(set.users.get('admin.backup')?.pwd, changed.MONGO_BACKUP_PASSWORD);
  });

  it('refuses to start without the backup password, naming the setting', () => {
    const set = new FakeReplicaSet();
    const { MONGO_BACKUP_PASSWORD: _, ...others } = PASSWORDS;
    const { code, output } = runInit(set, others);
    assert.equal(code, 1);
    assert.match(output.join('\n'), /set MONGO_BACKUP_PASSWORD in \.env/);
    assert.equal(set.initiated, false, 'nothing done');
  });

  it('stops with the reason when the administrator password is wrong', () => {
    const set = new FakeReplicaSet();
    runInit(set);
    const { code, output } = runInit(set, { ...PASSWORDS, MONGO_ADMIN_PASSWORD: 'f5f5f5f5f5f5f5f5f5f5' });
    assert.equal(code, 1);
    assert.match(output.join('\n'), /MONGO_ADMIN_PASSWORD is not "admin"'s password/);
  });

  it('adds the member TLS options to its connections', () => {
    const set = new FakeReplicaSet();
    assert.equal(runInit(set, PASSWORDS, { MONGO_TLS_OPTIONS: 'tls=true&tlsCAFile=/tls/ca.pem' }).code, 0);
    const connections = set.log.filter((line) => line.startsWith('connect '));
    assert.ok(connections.length >= 2);
    for (const line of connections) assert.match(line, /directConnection=true&tls=true&tlsCAFile=\/tls\/ca\.pem$/);
  });
});
