import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GEO_TYPES, ROLES, type GeoType, type Role, type Unit } from '../../shared/schemas.js';
import { TOKEN_LABEL_RULE, TOKEN_SCOPES, type TokenScope } from '../../shared/accounts.js';
import { composeServices } from '../compose.js';
import { loadConfig } from '../config.js';
import { ArchiveError, ConfigError, ValidationError } from '../errors.js';
import { createLogger } from '../log.js';
import { openStore } from '../store/open.js';
import { backupEmbedded, restoreEmbedded } from '../store/embedded/backup.js';
import { ARCHIVE_UNIT_ID, UNIT_NAME_RULE } from '../../shared/units.js';
import { ARCHIVE_UNIT, geographyOf, legacyNames, type UnitDirectory } from '../services/unit-directory.js';
import { checkedDisplayName } from '../services/accounts.js';
import { checkedName } from '../services/typed-names.js';

const USAGE = `Usage: npm run archive -- <command>

  user add <username> --role clerk|admin --unit <code> [--name <name>]
                             create an account in a unit of the directory (its code, or the id
                             of a unit added here; "archive" for a top-level administrator),
                             with the person's name (姓名, shown beside the login) if given;
                             the password is read from standard input
  user add <username> --role clerk|admin --unit <id> --city <name>
           [--county <name>] [--town <name>] [--street <name>] [--lng <deg> --lat <deg>]
                             the same with the unit's names, as earlier versions took it: the
                             directory unit of those names, or new units for names it lacks
  user list                  list accounts: login, role, unit id, unit, name
  units find <name or code>  search the unit directory (UNIT_REGIONS' provinces, units added here)
  units unmapped             accounts of an earlier version whose units are not in the directory:
                             assign them in the browser (单位 / Units) or with user add
  user password <username>   set a new password (read from standard input)
  token create <username> [--label <text>] [--days <n>] [--scopes tokens,accounts]
                             create an API token (expiring after n days; without --days, never),
                             which may also make tokens and, an administrator's, keep accounts
                             if --scopes says so; the token is the last line printed
  token list                 list API tokens: id, owner, created, label, scopes (never the secrets)
  token revoke <token-id>    revoke an API token
  gc                         remove what interrupted uploads left behind: resumable uploads idle
                             longer than UPLOAD_IDLE_HOURS, staging areas older than
                             STAGING_TTL_HOURS, and bytes no record owns; then compact the
                             embedded store's pack files that are half dead or hold removed
                             contents (idle longer than STAGING_TTL_HOURS); forget expired
                             claims, sessions, login-throttle and quota records, kept imports
  verify [--json]            fixity check: read every stored file back and recompute its MD5 and
                             SHA-256; lists missing and corrupted files; exit code 1 if any
  near-duplicates rebuild    forget every near-duplicate fingerprint and pair, fingerprint every
                             stored file again (here, now; running servers share the work)
  near-duplicates run        fingerprint the files waiting in the queue (failed ones included), here
  near-duplicates status     how the fingerprinting stands: done, skipped, waiting, failed
  near-duplicates work       keep fingerprinting (and reading scans' text) as files are queued,
                             until stopped (SIGTERM): the worker of the Docker profile, so the
                             web instances need not (NEAR_DUPLICATE_POLL_SECONDS=0, OCR=off)
  backup <dir>               embedded store: an online, consistent backup into <dir> (an earlier
                             backup there is brought up to date, copying only new files)
  restore <dir>              embedded store: restore the backup in <dir> into DATA_DIR, which
                             must not hold an archive (stop the service first)
  import <dir> --server <url> --token <token>
                             the bulk importer (npm run import): import a folder tree (or, with
                             --manifest, a path table) into a running archive over its API,
                             deduplicating as it goes; see npm run import -- --help

All but import act on the store the server uses, as the same settings choose it: STORE=mongodb
(or MONGODB_URI alone) for MongoDB, else the embedded store in DATA_DIR.`;

/** `--scopes`: a comma-separated list of TOKEN_SCOPES (none when the flag is absent). */
function tokenScopes(text: string | undefined): TokenScope[] {
  if (text === undefined) return [];
  const named = text.split(',').map((s) => s.trim());
  const known = (s: string): s is TokenScope => (TOKEN_SCOPES as readonly string[]).includes(s);
  const unknown = named.filter((s) => !known(s));
  if (unknown.length > 0 || named.length === 0)
    throw new ValidationError(
      `--scopes takes ${TOKEN_SCOPES.join(' and/or ')}, separated by commas; not "${unknown.join(',')}".`,
    );
  return [...new Set(named.filter(known))];
}

async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Password (then Enter and Ctrl-D): ');
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(part as Buffer);
  const text = Buffer.concat(parts)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (text === '')
    throw new ValidationError(
      'No password on standard input. Example: printf "%s" "$PASSWORD" | npm run archive -- user add …',
    );
  return text;
}

const placeOf = (unit: Unit) => legacyNames(unit).join(' / ');

/** `--name`, checked before the password is asked for, its problem told as the flag's. */
function cliDisplayName(value: string | undefined): string | null {
  try {
    return checkedDisplayName(value);
  } catch (err) {
    if (err instanceof ValidationError)
      throw new ValidationError(err.message.replace(/^Invalid displayName/, '--name'));
    throw err;
  }
}

/** An account the directory treats as a top-level administrator, to search it whole. */
const ARCHIVE_ADMIN = { role: 'admin', unit: ARCHIVE_UNIT } as const;

type UnitFlags = Partial<Record<'unit' | 'city' | 'county' | 'town' | 'street' | 'lng' | 'lat', string>>;

/**
 * The unit of `user add`: a directory unit by its code or id (--unit alone), or, with the flags
 * of earlier versions (--city…), the directory unit of those names or new units for the names
 * it lacks (UnitDirectory.placeNames).
 */
async function unitOf(directory: UnitDirectory, values: UnitFlags, role: Role): Promise<Unit> {
  // The archive's own unit, whatever names come with it (scripts of earlier versions gave it some).
  if (values.unit === ARCHIVE_UNIT_ID) {
    if (role !== 'admin')
      throw new ValidationError('Only administrators belong to the whole archive (--unit archive).');
    return ARCHIVE_UNIT;
  }
  if (values.city === undefined && values.county === undefined && values.town === undefined) {
    const id = values.unit;
    if (!id)
      throw new ValidationError('--unit <code> is required (find codes with: npm run archive -- units find <name>).');
    const unit = await directory.get(id);
    if (!unit)
      throw new ValidationError(
        `No unit has the code or id "${id}" (is its province in UNIT_REGIONS? find codes with: npm run archive -- units find <name>).`,
      );
    if (role === 'admin') await directory.checkAdministratorUnit(unit);
    return geographyOf(unit);
  }
  const legacy = unitFrom(values);
  const placed = await directory.placeNames(legacyNames(legacy));
  if (role === 'admin') await directory.checkAdministratorUnit(placed);
  const unit = geographyOf(placed);
  return legacy.coordinates ? { ...unit, coordinates: legacy.coordinates } : unit;
}

function unitFrom(values: UnitFlags): Unit {
  const { unit, lng, lat } = values;
  // Place names become units' names: the rule of every unit name typed (shared/typed-name.ts).
  const [city, county, town, street] = (['city', 'county', 'town', 'street'] as const).map((level) =>
    values[level] === undefined ? undefined : checkedName(values[level], UNIT_NAME_RULE, `--${level}`),
  );
  if (!unit || !/^[\w.-]{1,64}$/.test(unit))
    throw new ValidationError('--unit <unit-id> is required: 1 to 64 letters, digits, ".", "_" or "-".');
  if (!city) throw new ValidationError('--city <name> is required.');
  if (town && !county) throw new ValidationError('--town needs --county.');
  if (street && !town) throw new ValidationError('--street needs --town.');
  const levels: Record<GeoType, string | undefined> = { city, county, town, street };
  const geoType = [...GEO_TYPES].reverse().find((level) => levels[level])!;
  const result: Unit = {
    id: unit,
    geoType,
    city,
    ...(county ? { county } : {}),
    ...(town ? { town } : {}),
    ...(street ? { street } : {}),
  };
  if (lng !== undefined || lat !== undefined) {
    const coords = [Number(lng), Number(lat)] as [number, number];
    if (!coords.every(Number.isFinite) || Math.abs(coords[0]) > 180 || Math.abs(coords[1]) > 90)
      throw new ValidationError('--lng and --lat are decimal degrees, given together.');
    result.coordinates = coords;
  }
  return result;
}

/**
 * `archive import …`, as scripts written before `npm run import` call it. The importer is a client
 * of a running archive (client/importer/), not part of the server: it runs as a program of its own,
 * here in a child process that gets this one's signals (an interrupted import resumes from its journal).
 */
async function runImporter(args: string[]): Promise<number> {
  const main = fileURLToPath(new URL('../../client/importer/main.js', import.meta.url));
  if (!fs.existsSync(main))
    throw new ConfigError(
      'the bulk importer is not installed here (the service image has none): run `npm run import` from a checkout of the project.',
    );
  const child = spawn(process.execPath, [main, ...args], { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, forward);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  // Killed by a signal: exit as such a process does (128 + its number).
  return code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0);
}

async function run(argv: string[]): Promise<void> {
  if (argv[0] === 'import') {
    process.exitCode = await runImporter(argv.slice(1));
    return;
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      role: { type: 'string' },
      unit: { type: 'string' },
      name: { type: 'string' },
      city: { type: 'string' },
      county: { type: 'string' },
      town: { type: 'string' },
      street: { type: 'string' },
      lng: { type: 'string' },
      lat: { type: 'string' },
      label: { type: 'string' },
      days: { type: 'string' },
      scopes: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, command, name] = positionals;
  if (values.help || !group) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  if (group === 'backup' || group === 'restore') {
    if (!command || name) throw new ValidationError(`${group} needs one directory: npm run archive -- ${group} <dir>`);
    if (config.store === 'mongodb')
      throw new ValidationError(
        `${group} is for the embedded store; back up MongoDB with mongodump and mongorestore (docs/deployment.md).`,
      );
    const dir = path.resolve(command);
    if (group === 'backup') {
      const r = await backupEmbedded(config.dataDir, dir, (done, total) =>
        process.stderr.write(`  ${done} of ${total} files\n`),
      );
      out(
        `backup of ${r.files} file(s), ${r.bytes} bytes, as of ${r.createdAt} in ${r.directory} (${r.copiedFiles} file(s), ${r.copiedBytes} bytes copied this time)`,
      );
      if (r.damaged.length > 0) {
        const files = new Set(r.damaged.map((d) => d.fileId)).size;
        const chunks = r.damaged.map(
          (d) =>
            `${d.fileId} chunk ${d.chunk} (${d.kind === 'missing' ? 'bytes missing' : 'does not match its checksum'})`,
        );
        process.stderr.write(
          `archive: ${files} file(s) were already damaged in the archive and are backed up as they are: ${chunks.join(', ')}; run: npm run archive -- verify\n`,
        );
        process.exitCode = 1;
      }
    } else {
      const r = await restoreEmbedded(dir, config.dataDir);
      out(
        `restored ${r.files} file(s), ${r.bytes} bytes into ${config.dataDir}; check them with: npm run archive -- verify`,
      );
      if (r.damaged.length > 0)
        process.stderr.write(
          `archive: ${r.damaged.length} file(s) were damaged when the backup was made and are restored as they were: ${r.damaged.join(', ')}\n`,
        );
    }
    return;
  }
  const store = await openStore(config);
  // The worker logs what the server would (a failed job, the settings adopted); other commands print.
  const worker = group === 'near-duplicates' && command === 'work';
  const archive = composeServices(store, config, undefined, worker ? createLogger(config.logLevel) : undefined);
  const { accounts, tokens, audit, directory } = archive.services;
  // The archive command runs on the server: events it causes carry no client address.
  const byCommand = { address: null };
  try {
    // As the server does at its start: commands may run before it ever has.
    if (group === 'user' || group === 'units') {
      await directory.load(config.unitRegions);
      await directory.placeEarlierAccounts();
    }
    switch (command === undefined ? group : `${group} ${command}`) {
      case 'user add': {
        if (!name) throw new ValidationError('user add needs a username.');
        const role = values.role as Role;
        if (!ROLES.includes(role)) throw new ValidationError('--role must be clerk or admin.');
        const displayName = cliDisplayName(values.name);
        const unit = await unitOf(directory, values, role);
        const account = await accounts.create({
          username: name,
          displayName,
          password: await readPassword(),
          role,
          unit,
        });
        await audit.record('account_created', account, {
          ...byCommand,
          note: {
            code: 'account_created',
            role: account.role,
            ...(account.displayName !== null && { displayName: account.displayName }),
            by: 'command',
          },
        });
        const named = account.displayName === null ? '' : ` named ${account.displayName}`;
        out(
          `created ${account.role} ${account.username}${named} (id ${account.id}) in unit ${unit.id} (${placeOf(unit)})`,
        );
        break;
      }
      case 'user list':
        // A thousand at a time, in name order: a province's accounts are printed, never held.
        for (let offset = 0; ; offset += 1000) {
          const { items } = await store.accounts.page({}, offset, 1000, 0);
          for (const a of items)
            out(`${a.username}\t${a.role}\t${a.unit.id}\t${placeOf(a.unit)}\t${a.displayName ?? ''}`);
          if (items.length < 1000) break;
        }
        break;
      case 'units find': {
        if (!name) throw new ValidationError('units find needs a name or the start of a code.');
        const found = await directory.list(ARCHIVE_ADMIN, { q: name, limit: 100, offset: 0 });
        for (const u of found.items) out(`${u.id}\t${u.level}\t${u.path}`);
        if (found.total > found.items.length)
          out(`… and ${found.total - found.items.length} more: say more of the name`);
        if (found.total === 0) process.stderr.write(`archive: no unit matches "${name}"\n`);
        break;
      }
      case 'units unmapped': {
        const left = await directory.unmapped();
        for (const a of left) out(`${a.username}\t${a.role}\t${a.unit.id}\t${placeOf(a.unit)}`);
        out(
          left.length === 0
            ? 'every account is in the unit directory'
            : `${left.length} account(s) to assign a unit: in the browser (单位 / Units) or here with user add`,
        );
        break;
      }
      case 'user password': {
        if (!name) throw new ValidationError('user password needs a username.');
        const account = await accounts.getByUsername(name);
        const { tokensRevoked } = await accounts.resetPassword(account, await readPassword());
        await audit.record('password_reset', account, {
          ...byCommand,
          note: { code: 'password_reset', tokensRevoked, byCommand: true },
        });
        out(`password of ${name} changed; its sessions were ended and its ${tokensRevoked} API token(s) revoked`);
        break;
      }
      case 'token create': {
        if (!name) throw new ValidationError('token create needs a username.');
        const account = await accounts.getByUsername(name);
        const label = checkedName(values.label ?? '', TOKEN_LABEL_RULE, '--label');
        const days = values.days === undefined ? null : Number(values.days);
        if (days !== null && !(Number.isInteger(days) && days >= 1 && days <= 3650))
          throw new ValidationError('--days is a whole number of days from 1 to 3650.');
        const scopes = tokenScopes(values.scopes);
        const { id, token } = await tokens.create(account, { label, expiresInDays: days, scopes });
        out(`token id ${id} for ${name}; keep the token secret, it is not shown again:`);
        out(token);
        await audit.record('token_created', account, {
          ...byCommand,
          note: { code: 'token_created', tokenId: id, label, expiresInDays: days, scopes, byCommand: true },
        });
        break;
      }
      case 'token list': {
        const all = await tokens.list();
        // Only the tokens' owners are read.
        const byId = new Map(
          (await store.accounts.getMany(all.map((t) => t.accountId))).map((a) => [a.id, a.username]),
        );
        for (const t of all)
          out(
            `${t.id}\t${byId.get(t.accountId) ?? '(deleted account)'}\t${t.createdAt.toISOString()}\t${t.label}\t${t.scopes.join(',')}`,
          );
        break;
      }
      case 'token revoke': {
        if (!name) throw new ValidationError('token revoke needs a token id.');
        const owner = await tokens.get(name);
        await tokens.revoke(name);
        const ownerAccount = owner && (await accounts.get(owner.accountId));
        await audit.record('token_revoked', ownerAccount ?? { attemptedUserName: '(unknown token)' }, {
          ...byCommand,
          note: { code: 'token_revoked', tokenId: name, label: '', byCommand: true },
        });
        out(`token ${name} revoked`);
        break;
      }
      case 'gc': {
        const report = await archive.gc.run();
        out(
          `removed ${report.expiredUploads} expired upload(s), ${report.stagingAreas} abandoned staging area(s) and ${report.orphans} unowned file(s); finished counting ${report.finishedCounts} interrupted upload(s); purged ${report.purgedUploads} upload(s) past their time in the trash; forgot ${report.expiredRecords} expired login-throttle, quota and account-import record(s) (and expired claims and sessions); compacted ${report.compacted.packs} pack(s), ${report.compacted.reclaimedBytes} byte(s) given back`,
        );
        break;
      }
      case 'verify': {
        const result = await archive.services.fixity.run('command', {
          onProgress: (r) =>
            process.stderr.write(
              `  ${r.files} of ${r.totalFiles} files, ${r.missing} missing, ${r.corrupted} corrupted\n`,
            ),
        });
        if (!result) {
          const running = await archive.services.fixity.last();
          process.stderr.write(
            `archive: a fixity check is running already (on ${running?.host}, since ${running?.startedAt}); its progress is at GET /api/verification\n`,
          );
          process.exitCode = 1;
          break;
        }
        if (values.json) out(JSON.stringify(result));
        else {
          for (const p of result.problems) out(`${p.kind}\t${p.fileId}\t${p.chunk ?? ''}\t${p.fileName}\t${p.detail}`);
          const more = result.missing + result.corrupted - result.problems.length;
          if (more > 0) out(`… and ${more} more`);
          out(
            `${result.state}: ${result.files} file(s), ${result.bytes} bytes checked; ${result.missing} missing, ${result.corrupted} corrupted`,
          );
          if (result.checksummed > 0) out(`${result.checksummed} file(s) stored before chunk checksums got theirs`);
        }
        if (result.state !== 'passed') process.exitCode = 1;
        break;
      }
      case 'near-duplicates work': {
        if (config.nearDuplicatePollMs === 0)
          throw new ValidationError('near-duplicates work looks for files every NEAR_DUPLICATE_POLL_SECONDS: not 0.');
        const near = archive.services.nearDuplicates;
        const stopped = new Promise<string>((resolve) => {
          for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve(signal));
        });
        const queued = await near.adoptSettings();
        if (queued > 0) out(`the near-duplicate settings changed: ${queued} file(s) queued for fingerprinting again`);
        near.start(config.nearDuplicatePollMs);
        out(
          `fingerprinting queued files every ${config.nearDuplicatePollMs / 1000} s (OCR ${config.ocr ? 'on' : 'off'})`,
        );
        // The queue's timer keeps no process alive (a server's socket does): this does, until stopped.
        const alive = setInterval(() => {}, 60_000);
        out(`stopping (${await stopped}) after the files in hand`);
        clearInterval(alive);
        await near.stop();
        break;
      }
      case 'near-duplicates rebuild':
      case 'near-duplicates run':
      case 'near-duplicates status': {
        const near = archive.services.nearDuplicates;
        if (command === 'rebuild') out(`${await near.rebuild()} file(s) queued for fingerprinting`);
        if (command === 'run') {
          const queued = await near.adoptSettings();
          if (queued > 0) out(`the near-duplicate settings changed: ${queued} file(s) queued for fingerprinting again`);
          await near.retryFailed();
        }
        if (command !== 'status') {
          let done = 0;
          for (let ran; (ran = await near.runDue(100)) > 0;) {
            done += ran;
            process.stderr.write(`  ${done} file(s) fingerprinted\n`);
          }
        }
        const s = await near.status();
        if (values.json) out(JSON.stringify(s));
        else {
          for (const f of s.failures)
            out(`failed\t${f.fileId}\t${f.fileName ?? ''}\t${f.attempts} attempt(s)\t${f.error}`);
          out(
            `${s.fingerprinted} file(s) fingerprinted, ${s.skipped} without text, ${s.pairs} near-duplicate pair(s); ${s.queued} waiting, ${s.running} running, ${s.failed} failed`,
          );
        }
        if (s.failed > 0) process.exitCode = 1;
        break;
      }
      default:
        throw new ValidationError(`unknown command "${positionals.join(' ')}".\n\n${USAGE}`);
    }
  } finally {
    await archive.digests.close();
    await archive.textReader.close();
    await store.close();
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (
    err instanceof ArchiveError ||
    err instanceof ConfigError ||
    (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  ) {
    process.stderr.write(`archive: ${(err as Error).message}\n`);
    process.exit(2);
  }
  process.stderr.write(`archive: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
