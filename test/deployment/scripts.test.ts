import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT } from './files.js';

const BACKUP = `${ROOT}deploy/mongo/backup.sh`;
const ENTRYPOINT = `${ROOT}deploy/app/archive-entrypoint.sh`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-deploy-scripts-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

function secretFile(name: string, content: string): string {
  const file = path.join(work, name);
  fs.writeFileSync(file, content);
  return file;
}

/**
 * mongodump and mongorestore as they are called: a stand-in on PATH writes its arguments and
 * the --config file it was given (read while it runs) as JSON to standard error.
 */
const bin = path.join(work, 'bin');
fs.mkdirSync(bin);
for (const tool of ['mongodump', 'mongorestore'])
  fs.writeFileSync(
    path.join(bin, tool),
    `#!${process.execPath}\n` +
      `const fs = require('fs'); const args = process.argv.slice(2);\n` +
      `const config = args[args.indexOf('--config') + 1];\n` +
      `console.error(JSON.stringify({ tool: ${JSON.stringify(tool)}, args, config, configText: fs.readFileSync(config, 'utf8') }));\n`,
    { mode: 0o755 },
  );

interface ToolCall {
  tool: string;
  args: string[];
  config: string;
  configText: string;
}

function backup(command: string, env: Record<string, string> = {}) {
  const run = spawnSync('sh', [BACKUP, command], {
    encoding: 'utf8',
    env: {
      PATH: `${bin}:${process.env.PATH}`,
      MONGO_BACKUP_PASSWORD_FILE: secretFile('mongo_backup_password', 'c2c2c2c2c2c2c2c2c2c2\n'),
      ...env,
    },
  });
  const call = run.status === 0 ? (JSON.parse(run.stderr) as ToolCall) : undefined;
  return { status: run.status, stderr: run.stderr, call };
}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args[at + 1];
}

describe('deploy/mongo/backup.sh', () => {
  it('dumps the whole replica set as "backup", point in time, from a secondary', () => {
    const { status, stderr, call } = backup('dump');
    assert.equal(status, 0, stderr);
    assert.equal(call?.tool, 'mongodump');
    assert.equal(
      option(call.args, '--uri'),
      'mongodb://backup@mongo1:27017,mongo2:27017,mongo3:27017/?replicaSet=rs0&authSource=admin&readPreference=secondary',
    );
    for (const flag of ['--oplog', '--archive', '--gzip']) assert.ok(call.args.includes(flag), flag);
    assert.ok(!call.args.includes('--db'), '--oplog needs the whole deployment');
  });

  it("restores into the replica set and replays the dump's oplog", () => {
    const { status, stderr, call } = backup('restore');
    assert.equal(status, 0, stderr);
    assert.equal(call?.tool, 'mongorestore');
    assert.equal(
      option(call.args, '--uri'),
      'mongodb://backup@mongo1:27017,mongo2:27017,mongo3:27017/?replicaSet=rs0&authSource=admin',
    );
    for (const flag of ['--oplogReplay', '--archive', '--gzip']) assert.ok(call.args.includes(flag), flag);
    // Restores insert: nothing is dropped on the way.
    assert.ok(!call.args.includes('--drop'));
  });

  it('gives the tool the password in a file it removes afterwards, never on its command line', () => {
    for (const command of ['dump', 'restore']) {
      const { call } = backup(command);
      assert.ok(call);
      assert.equal(call.configText, 'password: "c2c2c2c2c2c2c2c2c2c2"\n');
      assert.ok(!call.args.some((arg) => arg.includes('c2c2c2')), 'not in the arguments');
      assert.equal(fs.existsSync(call.config), false, 'removed');
    }
  });

  it('connects with TLS when the members require it', () => {
    const { call } = backup('dump', { MONGO_TLS_OPTIONS: 'tls=true&tlsCAFile=/tls/ca.pem' });
    assert.match(
      option(call!.args, '--uri')!,
      /&authSource=admin&tls=true&tlsCAFile=\/tls\/ca\.pem&readPreference=secondary$/,
    );
  });

  it('refuses anything else with its usage', () => {
    const { status, stderr } = backup('drop');
    assert.equal(status, 2);
    assert.match(stderr, /usage: backup\.sh dump/);
  });
});

/** The environment the entrypoint hands its command (env, one variable a line). */
function entrypoint(env: Record<string, string>) {
  const run = spawnSync('sh', [ENTRYPOINT, 'env'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });
  const seen = new Map(
    run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
  return { status: run.status, stderr: run.stderr, seen };
}

describe('deploy/app/archive-entrypoint.sh', () => {
  const uri = 'mongodb://archive@mongo1:27017,mongo2:27017,mongo3:27017/archive?replicaSet=rs0';

  it('puts the password of the secret file into MONGODB_URI', () => {
    const file = secretFile('archive_db_password', 'b1b1b1b1b1b1b1b1b1b1\n');
    const { status, stderr, seen } = entrypoint({ MONGODB_URI: uri, MONGODB_PASSWORD_FILE: file });
    assert.equal(status, 0, stderr);
    assert.equal(
      seen.get('MONGODB_URI'),
      'mongodb://archive:b1b1b1b1b1b1b1b1b1b1@mongo1:27017,mongo2:27017,mongo3:27017/archive?replicaSet=rs0',
    );
    assert.equal(seen.has('MONGODB_PASSWORD_FILE'), false);
  });

  it('passes the environment on as it is without a password file', () => {
    const { status, seen } = entrypoint({ MONGODB_URI: 'mongodb://mongo:27017/archive', TRUST_PROXY: '1' });
    assert.equal(status, 0);
    assert.equal(seen.get('MONGODB_URI'), 'mongodb://mongo:27017/archive');
    assert.equal(seen.get('TRUST_PROXY'), '1');
  });

  it('refuses what would make a wrong URI, saying why', () => {
    const file = secretFile('archive_db_password_2', 'b1b1b1b1b1b1b1b1b1b1');
    const cases: [Record<string, string>, RegExp][] = [
      [{ MONGODB_URI: uri, MONGODB_PASSWORD_FILE: secretFile('bad', 'pa@ss/word') }, /letters and digits only/],
      [{ MONGODB_URI: uri, MONGODB_PASSWORD_FILE: path.join(work, 'absent') }, /cannot read .*ARCHIVE_DB_PASSWORD/],
      [{ MONGODB_URI: 'mongodb://mongo1:27017/archive', MONGODB_PASSWORD_FILE: file }, /must name its user/],
      [
        { MONGODB_URI: 'mongodb://archive:x@mongo1:27017/archive', MONGODB_PASSWORD_FILE: file },
        /has a password already/,
      ],
    ];
    for (const [env, message] of cases) {
      const { status, stderr, seen } = entrypoint(env);
      assert.equal(status, 1, JSON.stringify(env));
      assert.match(stderr, message);
      assert.equal(seen.size, 0, 'the command did not run');
    }
  });
});
