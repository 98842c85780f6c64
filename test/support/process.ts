import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import { MongoClient } from 'mongodb';
import { forgetKeptConnections } from './kept-connections.js';
import { mongoUri, tempDir, type StoreTarget } from './stores.js';

/** Real server processes and the archive command, for tests that kill, restart or run two servers. */

/** The server's entry point, for tests that start it their own way. */
export const SERVER_MAIN = new URL('../../server/main.js', import.meta.url).pathname;
const MAIN = SERVER_MAIN;
const CLI = new URL('../../server/cli/archive.js', import.meta.url).pathname;

export interface Started {
  child: ChildProcessWithoutNullStreams;
  url: string;
  /** What the process printed until it listened. */
  stdout: string;
}

/** Starts the real server process and waits for its "listening" log line. */
export async function startServer(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env } });
  let stdout = '';
  child.stderr.on('data', (d) => process.stderr.write(d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const match = /"port":(\d+).*archive listening/.exec(stdout);
      if (match) resolve(`http://127.0.0.1:${match[1]}`);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stdout}`)));
  });
  return { child, url, stdout };
}

export async function stopServer(s: Started): Promise<number | null> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return s.child.exitCode;
  s.child.kill('SIGTERM');
  const [code] = await once(s.child, 'exit');
  return code as number | null;
}

/** kill -9: no shutdown code runs. */
export async function killServer(s: Started): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill('SIGKILL');
  await once(s.child, 'exit');
}

/** Runs the server process to its exit (for start-up failures). */
export function runServerToExit(env: Record<string, string>) {
  const run = spawnSync(process.execPath, [MAIN], { env: { ...process.env, PORT: '0', ...env }, encoding: 'utf8' });
  forgetKeptConnections();
  return run;
}

/** Runs the archive command to its exit (this process waits, its event loop blocked). */
export function cli(args: string[], env: Record<string, string>, input?: string) {
  const run = spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    input: input ?? '',
    encoding: 'utf8',
  });
  forgetKeptConnections();
  return run;
}

/** A loopback port nobody listens on right now (a restarted server keeps its upload URLs). */
export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

export interface ProcessStore {
  /** The environment that points a server process or the archive command at the store. */
  env: Record<string, string>;
  dispose(): Promise<void>;
}

/**
 * The settings that choose the embedded store for a process, whatever store the test run itself
 * was given (its STORE and MONGODB_URI are overridden, not inherited).
 */
export const EMBEDDED_STORE = { STORE: 'embedded', MONGODB_URI: '' } as const;

/** A fresh store for server processes: an embedded DATA_DIR, or a fresh MongoDB database. */
export function processStore(target: StoreTarget): ProcessStore {
  const dataDir = tempDir();
  if (target.name === 'embedded') {
    return {
      env: { DATA_DIR: dataDir, ...EMBEDDED_STORE },
      dispose: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const uri = mongoUri!;
  const dbName = `archive_test_${randomBytes(6).toString('hex')}`;
  return {
    env: { DATA_DIR: dataDir, STORE: 'mongodb', MONGODB_URI: uri, MONGODB_DB: dbName },
    async dispose() {
      fs.rmSync(dataDir, { recursive: true, force: true });
      const client = await MongoClient.connect(uri);
      await client.db(dbName).dropDatabase();
      await client.close();
    },
  };
}

/** The password `addAccount` gives accounts unless told otherwise. */
export const ACCOUNT_PASSWORD = 'a long password';

export interface AccountSpec {
  role?: 'clerk' | 'admin';
  /** `archive`: a top-level administrator; else a unit named by `city` (and `county`), as earlier versions did. */
  unit?: string;
  city?: string;
  county?: string;
  password?: string;
}

/**
 * An account made with the archive command (a clerk in 沧州市 unless told otherwise). Units are
 * told apart by their names (the directory's rule): accounts of one city and county share a unit.
 */
export function addAccount(env: Record<string, string>, username: string, spec: AccountSpec = {}): void {
  const { role = 'clerk', unit = 'unit-a', city = '沧州市', county, password = ACCOUNT_PASSWORD } = spec;
  const where = unit === 'archive' ? [] : ['--city', city, ...(county ? ['--county', county] : [])];
  const add = cli(['user', 'add', username, '--role', role, '--unit', unit, ...where], env, `${password}\n`);
  if (add.status !== 0) throw new Error(add.stderr);
}

/** An API token for an account, made with the archive command. */
export function createToken(env: Record<string, string>, username: string): string {
  const token = cli(['token', 'create', username], env);
  if (token.status !== 0) throw new Error(token.stderr);
  return token.stdout.trim().split('\n').pop()!;
}

/** A clerk and an API token for it, made with the archive command. */
export function clerkToken(env: Record<string, string>, username = 'clerk'): string {
  addAccount(env, username);
  return createToken(env, username);
}
