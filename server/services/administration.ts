import { randomInt, randomUUID } from 'node:crypto';
import {
  displayNameField,
  ROLE_NAMES,
  type AccountList,
  type AccountListQuery,
  type AccountPatchRequest,
  type AccountState,
  type AccountSummary,
  type ImportProblem,
  type ImportRowProblem,
  type KeptImportView,
  type NewAccountRequest,
  type NewTokenRequest,
  type NewTokenView,
  type OneTimePasswordView,
  type TokenView,
} from '../../shared/accounts.js';
import type { Role, Unit } from '../../shared/schemas.js';
import { ARCHIVE_UNIT_ID, type NewUnitRequest } from '../../shared/units.js';
import { ConflictError, NotFoundError, UsernameTakenError, ValidationError } from '../errors.js';
import {
  searchForm,
  usernameKey,
  type Account,
  type AccountSelection,
  type AccountStore,
  type ApiTokenRecord,
  type ImportedAccount,
  type KeptImport,
  type SessionStore,
} from '../store/accounts/port.js';
import type { DirectoryUnit } from '../store/units/port.js';
import type { AccountService } from './accounts.js';
import { checkedDisplayName, USERNAME_RULE, validUsername } from './accounts.js';
import type { AuditService } from './audit.js';
import { importRows, importTable, type SkippedRows } from './import-file.js';
import type { LoginThrottle } from './login-throttle.js';
import { hashOneTimePassword } from './password.js';
import type { TokenService } from './sessions.js';
import { nearestUnit } from './unit-suggestion.js';
import {
  ARCHIVE_UNIT,
  geographyOf,
  legacyNames,
  reaches,
  unitView,
  type Reach,
  type UnitDirectory,
} from './unit-directory.js';

export interface AdministrationDeps {
  accounts: AccountService;
  store: Pick<
    AccountStore,
    'getMany' | 'page' | 'get' | 'update' | 'createMany' | 'takenUsernames' | 'keptImports' | 'takeKeptImport'
  >;
  sessions: Pick<SessionStore, 'deleteForAccount'>;
  tokens: Pick<TokenService, 'list' | 'liveCounts' | 'create' | 'get' | 'revoke'>;
  directory: UnitDirectory;
  throttle: Pick<LoginThrottle, 'throttledUsernames' | 'forget'>;
  audit: Pick<AuditService, 'record' | 'recordMany'>;
  clock: () => Date;
}

/** An account with the directory unit it belongs to (undefined: the archive's own, or free text of an earlier version). */
interface Placed {
  account: Account;
  unit: DirectoryUnit | undefined;
}

// Letters and digits that cannot be mistaken for one another when read out over the phone.
const READABLE = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A one-time password a clerk can type from a note: three groups of four, about 59 bits. */
export function oneTimePassword(): string {
  const group = () => Array.from({ length: 4 }, () => READABLE[randomInt(READABLE.length)]).join('');
  return `${group()}-${group()}-${group()}`;
}

/** How long an import's answer is kept for its administrator, when it is not downloaded sooner. */
export const KEPT_IMPORT_MS = 24 * 3600_000;
/** One-time passwords hashed at once by an import: leaves the other threads of libuv's pool (4) to logins and files. */
const HASHING_LANES = 2;

/** An import's answer: its id (to take the kept copy) and each account with its one-time password. */
export interface KeptImportAnswer {
  id: string;
  accounts: ImportedAccount[];
}

/** An import's answer as the import gives it: also the rows it skipped. */
export interface ImportAnswer extends KeptImportAnswer {
  skipped: SkippedRows;
}

/** A row's unit, or why the row cannot have it (its problem in both forms). */
type ImportUnit = { unit: Unit; dir?: DirectoryUnit } | { refused: [ImportProblem, string] };

/** A role as a spreadsheet names it; only the names themselves (a cell "__proto__" is no role). */
function roleNamed(text: string): Role | undefined {
  const key = text.toLowerCase();
  return Object.hasOwn(ROLE_NAMES, key) ? ROLE_NAMES[key] : undefined;
}

/**
 * A taken username as the caller is told it: top-level administrators, who see every account,
 * that it is taken; others only that it cannot be used, not whether another county has it.
 */
function takenProblem(username: string, reach: Reach): [ImportProblem, string] {
  return reach.kind === 'everything'
    ? [{ code: 'username_taken' }, `username "${username}" is taken`]
    : [{ code: 'username_unavailable' }, `username "${username}" cannot be used: choose another`];
}

function importRefused(problems: ImportRowProblem[]): ValidationError {
  return new ValidationError(
    `${problems.length} row(s) are wrong, so no account was created: ${problems
      .slice(0, 5)
      .map((p) => `line ${p.line}: ${p.problems.join('; ')}`)
      .join(' | ')}${problems.length > 5 ? ' | …' : ''}`,
    { rows: problems },
  );
}

/** `work` on every item, at most `lanes` at a time; the results in the items' order. */
async function inLanes<T, R>(lanes: number, items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  return results;
}

const describeUnit = (unit: Unit) => `${legacyNames(unit).join(' / ')} (${unit.id})`;
const named = (account: Pick<Account, 'username' | 'id'>) => ({ username: account.username, accountId: account.id });

/**
 * Accounts as administrators keep them: each administrator acts within its reach (its unit's
 * subtree; everything for the archive's top-level administrators), and every action is audited.
 */
export class AccountAdministration {
  /**
   * Changes to accounts, one after another: two top-level administrators disabling each other at
   * once would each count the other as staying, and leave the archive with none. (Per process: a
   * second server process on the same store is not held back; the archive command can always add
   * a top-level administrator.)
   */
  #changes: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: AdministrationDeps) {}

  #oneAtATime<T>(change: () => Promise<T>): Promise<T> {
    const done = this.#changes.then(change);
    this.#changes = done.catch(() => {});
    return done;
  }

  private async placeAll(accounts: Account[]): Promise<Placed[]> {
    const ids = [...new Set(accounts.map((a) => a.unit.id).filter((id) => id !== ARCHIVE_UNIT_ID))];
    const units = new Map((await this.deps.directory.getMany(ids)).map((u) => [u.id, u]));
    return accounts.map((account) => ({ account, unit: units.get(account.unit.id) }));
  }

  private inReach(reach: Reach, placed: Placed): boolean {
    if (reach.kind === 'everything') return true;
    return placed.unit !== undefined && reaches(reach, placed.unit);
  }

  /** An account the caller administers; anything else is "not found" (other counties' accounts stay unknown). */
  private async accountInReach(caller: Account, id: string): Promise<Placed> {
    const account = await this.deps.store.get(id);
    const [placed] = account ? await this.placeAll([account]) : [];
    if (!placed || !this.inReach(await this.deps.directory.reachOf(caller), placed))
      throw new NotFoundError(`No account with the id "${id}" is within your reach.`);
    return placed;
  }

  private isTopLevel(placed: Placed): boolean {
    // An administrator of an earlier version whose unit is not in the directory sees everything (reachOf).
    return placed.account.role === 'admin' && placed.unit === undefined;
  }

  private async summaries(placed: Placed[]): Promise<AccountSummary[]> {
    const now = this.deps.clock();
    // The tokens of these accounts only, counted in the store.
    const [throttled, tokenCount] = await Promise.all([
      this.deps.throttle.throttledUsernames(),
      this.deps.tokens.liveCounts(
        placed.map((p) => p.account.id),
        now,
      ),
    ]);
    return placed.map((p) => {
      const a = p.account;
      const state: AccountState = a.disabled
        ? 'disabled'
        : throttled.has(usernameKey(a.username))
          ? 'throttled'
          : a.mustChangePassword
            ? 'must_change_password'
            : 'active';
      return {
        id: a.id,
        username: a.username,
        displayName: a.displayName,
        role: a.role,
        unit: p.unit ? unitView(p.unit) : null,
        unitText: p.unit
          ? p.unit.path.join(' / ')
          : a.unit.id === ARCHIVE_UNIT_ID
            ? ''
            : legacyNames(a.unit).join(' / '),
        topLevel: this.isTopLevel(p),
        state,
        createdAt: a.createdAt.toISOString(),
        lastLoginAt: a.lastLoginAt?.toISOString() ?? null,
        tokens: tokenCount.get(a.id) ?? 0,
      };
    });
  }

  async summary(account: Account): Promise<AccountSummary> {
    return (await this.summaries(await this.placeAll([account])))[0]!;
  }

  /** A unit added under one the caller reaches (unit_created). */
  async addUnit(caller: Account, request: NewUnitRequest, address: string | null): Promise<DirectoryUnit> {
    const unit = await this.deps.directory.add(caller, request);
    await this.deps.audit.record('unit_created', caller, {
      address,
      note: { code: 'unit_created', path: unit.path, unitId: unit.id },
    });
    return unit;
  }

  /** A unit added here renamed, within the caller's reach (unit_renamed). */
  async renameUnit(caller: Account, id: string, name: string, address: string | null): Promise<DirectoryUnit> {
    const { before, after } = await this.deps.directory.rename(caller, id, name);
    await this.deps.audit.record('unit_renamed', caller, {
      address,
      note: { code: 'unit_renamed', path: before.path, name: after.name, unitId: after.id },
    });
    return after;
  }

  /**
   * Accounts of an earlier version whose free-text units the mapping could not place in the
   * directory (top-level administrators see them; nobody else reaches them).
   */
  async unmapped(caller: Account, page: { offset: number; limit: number }): Promise<AccountSummary[]> {
    if ((await this.deps.directory.reachOf(caller)).kind !== 'everything') return [];
    return this.summaries(await this.placeAll(await this.deps.directory.unmapped(page)));
  }

  /**
   * The accounts in the caller's reach, filtered, by username: one page of them read from the
   * store, the reach and the filters given to it as units (the directory says which).
   */
  async list(caller: Account, query: AccountListQuery): Promise<AccountList> {
    const reach = await this.deps.directory.reachOf(caller);
    const filterUnit =
      query.unit === undefined
        ? undefined
        : query.unit === ARCHIVE_UNIT_ID
          ? ARCHIVE_UNIT_ID
          : await this.deps.directory.unitInReach(caller, query.unit);
    if (filterUnit === ARCHIVE_UNIT_ID && reach.kind !== 'everything')
      throw new NotFoundError(`No unit with the id "${ARCHIVE_UNIT_ID}" is within your reach.`);
    const page = { limit: query.limit, offset: query.offset };
    if (reach.kind === 'nothing') return { items: [], total: 0, totalCapped: false, ...page };
    const selection: AccountSelection = { ...(query.role && { role: query.role }) };
    if (filterUnit === ARCHIVE_UNIT_ID) selection.units = [ARCHIVE_UNIT_ID];
    else if (filterUnit) selection.units = await this.deps.directory.unitIdsIn({ kind: 'subtree', root: filterUnit });
    else if (reach.kind === 'subtree') selection.units = await this.deps.directory.unitIdsIn(reach);
    if (query.q) {
      // A unit matches by its path (so a county's name takes its towns) or the start of its code,
      // found by the directory without reading the units.
      const units = await this.deps.directory.unitIdsIn(reach, query.q);
      selection.text = { part: searchForm(query.q), units };
    }
    if (query.state) {
      const throttled = { in: [...(await this.deps.throttle.throttledUsernames())] };
      const notThrottled = { notIn: throttled.in };
      Object.assign(
        selection,
        {
          disabled: { disabled: true },
          throttled: { disabled: false, usernameKeys: throttled },
          must_change_password: { disabled: false, usernameKeys: notThrottled, mustChangePassword: true },
          active: { disabled: false, usernameKeys: notThrottled, mustChangePassword: false },
        }[query.state],
      );
    }
    const found = await this.deps.store.page(selection, query.offset, query.limit);
    const items = await this.summaries(await this.placeAll(found.items));
    return { items, total: found.total, totalCapped: found.capped, ...page };
  }

  /**
   * The unit an account of this role may be given by the caller: a unit in the caller's reach,
   * or the archive's own unit (top-level administrators only, and only for administrators).
   */
  private async assignableUnit(
    caller: Account,
    unitId: string,
    role: Role,
  ): Promise<{ unit: Unit; dir?: DirectoryUnit }> {
    if (unitId === ARCHIVE_UNIT_ID) {
      if ((await this.deps.directory.reachOf(caller)).kind !== 'everything')
        throw new NotFoundError(`No unit with the id "${unitId}" is within your reach.`);
      if (role !== 'admin')
        throw new ValidationError(
          'Only administrators belong to the whole archive; give a clerk the unit they work in.',
          { field: 'unitId' },
        );
      return { unit: ARCHIVE_UNIT };
    }
    const dir = await this.deps.directory.unitInReach(caller, unitId);
    if (role === 'admin') await this.deps.directory.checkAdministratorUnit(dir);
    return { unit: geographyOf(dir), dir };
  }

  async create(caller: Account, request: NewAccountRequest, address: string | null): Promise<OneTimePasswordView> {
    const { unit } = await this.assignableUnit(caller, request.unitId, request.role);
    const password = oneTimePassword();
    const account = await this.deps.accounts
      .create({
        username: request.username,
        displayName: request.displayName ?? null,
        password,
        role: request.role,
        unit,
        mustChangePassword: true,
      })
      .catch(async (err: unknown) => {
        // Only top-level administrators, who see every account, are told that an account has the name.
        if (err instanceof UsernameTakenError && (await this.deps.directory.reachOf(caller)).kind !== 'everything')
          throw new ConflictError('This username cannot be used: choose another.', 'username_unavailable');
        throw err;
      });
    await this.deps.audit.record('account_created', caller, {
      address,
      note: {
        code: 'account_created',
        ...named(account),
        ...(account.displayName !== null && { displayName: account.displayName }),
        role: account.role,
        unit: describeUnit(unit),
        by: 'administrator',
      },
    });
    return { account: await this.summary(account), oneTimePassword: password };
  }

  /**
   * Whether an active top-level administrator other than `except` stays: one of the archive's own
   * unit, by the units' index; only when there is none, the active administrators (by the role's
   * index, a thousand at a time) for one of an earlier version whose unit is not in the directory.
   */
  private async otherActiveTopLevelAdmin(except: string): Promise<boolean> {
    const own = await this.deps.store.page({ units: [ARCHIVE_UNIT_ID], role: 'admin', disabled: false }, 0, 2, 0);
    if (own.items.some((a) => a.id !== except)) return true;
    for (let offset = 0; ; offset += 1000) {
      const { items } = await this.deps.store.page({ role: 'admin', disabled: false }, offset, 1000, 0);
      if ((await this.placeAll(items)).some((p) => p.account.id !== except && this.isTopLevel(p))) return true;
      if (items.length < 1000) return false;
    }
  }

  update(caller: Account, id: string, patch: AccountPatchRequest, address: string | null): Promise<AccountSummary> {
    return this.#oneAtATime(() => this.#update(caller, id, patch, address));
  }

  async #update(
    caller: Account,
    id: string,
    patch: AccountPatchRequest,
    address: string | null,
  ): Promise<AccountSummary> {
    const target = await this.accountInReach(caller, id);
    const before = target.account;
    const role = patch.role ?? before.role;
    const self = before.id === caller.id;
    if (self && patch.disabled === true)
      throw new ConflictError('You cannot disable your own account.', 'own_account_disabled');
    if (self && role !== before.role) throw new ConflictError('You cannot change your own role.', 'own_role');
    const moved = patch.unitId !== undefined && patch.unitId !== before.unit.id;
    let unit: Unit | undefined;
    let dir = target.unit;
    if (moved) ({ unit, dir } = await this.assignableUnit(caller, patch.unitId!, role));
    else if (role !== before.role && before.unit.id === ARCHIVE_UNIT_ID && role !== 'admin')
      throw new ValidationError('Only administrators belong to the whole archive; give the account a unit as well.');
    else if (role === 'admin' && before.role !== 'admin' && dir) await this.deps.directory.checkAdministratorUnit(dir);
    const displayName = patch.displayName === undefined ? before.displayName : checkedDisplayName(patch.displayName);
    const renamed = displayName !== before.displayName;
    const after: Placed = { account: { ...before, role, disabled: patch.disabled ?? before.disabled }, unit: dir };
    const wasTop = this.isTopLevel(target) && !before.disabled;
    const staysTop = this.isTopLevel(after) && !after.account.disabled;
    if (wasTop && !staysTop && !(await this.otherActiveTopLevelAdmin(before.id)))
      throw new ConflictError(
        'This is the last active top-level administrator: make another account a top-level administrator first.',
        'last_top_admin',
      );
    await this.deps.store.update(before.id, {
      ...(role !== before.role ? { role } : {}),
      ...(unit ? { unit } : {}),
      ...(patch.disabled !== undefined ? { disabled: patch.disabled } : {}),
      ...(renamed ? { displayName } : {}),
    });
    const who = named(before);
    if (role !== before.role || unit || renamed)
      await this.deps.audit.record('account_updated', caller, {
        address,
        note: {
          code: 'account_updated',
          ...who,
          ...(role !== before.role ? { role: { from: before.role, to: role } } : {}),
          ...(unit ? { unit: { from: describeUnit(before.unit), to: describeUnit(unit) } } : {}),
          ...(renamed ? { name: { from: before.displayName, to: displayName } } : {}),
        },
      });
    if (patch.disabled === true && !before.disabled) {
      await this.deps.sessions.deleteForAccount(before.id);
      await this.deps.audit.record('account_disabled', caller, {
        address,
        note: { code: 'account_disabled', ...who },
      });
    }
    if (patch.disabled === false && before.disabled)
      await this.deps.audit.record('account_enabled', caller, { address, note: { code: 'account_named', ...who } });
    return this.summary((await this.deps.store.get(before.id))!);
  }

  /** A new one-time password: the account's sessions end and its API tokens are revoked. */
  async resetPassword(caller: Account, id: string, address: string | null): Promise<OneTimePasswordView> {
    const { account } = await this.accountInReach(caller, id);
    // It would end the caller's own session ("登录已过期"): one's own password is changed, not reset.
    if (account.id === caller.id)
      throw new ConflictError(
        'You cannot reset your own password: change it under your account (修改密码) instead.',
        'own_password_reset',
      );
    const password = oneTimePassword();
    const { tokensRevoked } = await this.deps.accounts.resetPassword(account, password);
    await this.deps.audit.record('password_reset', caller, {
      address,
      note: { code: 'password_reset', ...named(account), tokensRevoked },
    });
    return { account: await this.summary((await this.deps.store.get(id))!), oneTimePassword: password };
  }

  /** Clears the login throttle's counts for the account (from every address). */
  async unblock(caller: Account, id: string, address: string | null): Promise<AccountSummary> {
    const { account } = await this.accountInReach(caller, id);
    await this.deps.throttle.forget(account.username);
    await this.deps.audit.record('account_unblocked', caller, {
      address,
      note: { code: 'account_named', ...named(account) },
    });
    return this.summary(account);
  }

  /**
   * Accounts from a CSV or an Excel workbook (import-file.ts: username, role, unit code, and
   * optionally the display name; a header row is recognised and skipped, and so are rows of empty
   * cells and example rows, which the answer counts): every row is checked first, and nothing is
   * created if any row is wrong, or if a username is taken meanwhile. The accounts are created
   * together (AccountStore.createMany), and the answer, each account with its one-time password
   * in the file's order, is kept for the caller until it takes it once (takeKeptImport) or it
   * expires.
   */
  async importFile(caller: Account, file: Uint8Array, address: string | null): Promise<ImportAnswer> {
    const { rows, skipped } = importRows(await importTable(file));
    const reach = await this.deps.directory.reachOf(caller);
    const taken = await this.deps.store.takenUsernames(rows.map((r) => r.cells[0] ?? '').filter(validUsername));
    const problems: ImportRowProblem[] = [];
    const planned: Array<{
      line: number;
      username: string;
      displayName: string | null;
      role: Role;
      unit: Unit;
      unitText: string;
    }> = [];
    const seen = new Map<string, number>();
    // Rows of one unit and role ask the directory once.
    const units = new Map<string, Promise<ImportUnit>>();
    const unitFor = (code: string, role: Role) => {
      const key = `${role}\n${code}`;
      if (!units.has(key)) units.set(key, this.importUnit(caller, code, role));
      return units.get(key)!;
    };
    for (const { line, cells: row } of rows) {
      const [username = '', roleText = '', code = '', nameText = ''] = row;
      const wrong: string[] = [];
      const codes: ImportProblem[] = [];
      const refuse = (problem: ImportProblem, words: string) => {
        codes.push(problem);
        wrong.push(words);
      };
      if (row.length > 4 && row.slice(4).some((c) => c !== ''))
        refuse({ code: 'too_many_columns' }, 'more than four columns');
      const name = displayNameField.safeParse(nameText);
      if (!name.success) refuse({ code: 'bad_name' }, `name: ${name.error.issues[0]!.message}`);
      const displayName = name.success ? name.data : null;
      const role = roleNamed(roleText);
      if (!role)
        refuse({ code: 'bad_role', role: roleText }, `role "${roleText}" is not clerk (档案员) or admin (管理员)`);
      if (!validUsername(username)) refuse({ code: 'bad_username' }, `username: ${USERNAME_RULE}`);
      else {
        const key = usernameKey(username);
        if (seen.has(key))
          refuse(
            { code: 'username_repeated', line: seen.get(key)! },
            `username "${username}" is also on line ${seen.get(key)}`,
          );
        else if (taken.has(username)) refuse(...takenProblem(username, reach));
        seen.set(key, line);
      }
      let unit: { unit: Unit; dir?: DirectoryUnit } | undefined;
      if (code === '') refuse({ code: 'no_unit' }, 'no unit code');
      else {
        const found = await unitFor(code, role ?? 'clerk');
        if ('refused' in found) refuse(...found.refused);
        else unit = found;
      }
      if (wrong.length > 0) problems.push({ line, username, problems: wrong, codes });
      else
        planned.push({
          line,
          username,
          displayName,
          role: role!,
          unit: unit!.unit,
          unitText: unit!.dir?.path.join(' / ') ?? '',
        });
    }
    if (problems.length > 0) throw importRefused(problems);

    const now = this.deps.clock();
    const made = await inLanes(HASHING_LANES, planned, async (p) => {
      const password = oneTimePassword();
      const account: Account = {
        id: randomUUID(),
        username: p.username,
        displayName: p.displayName,
        passwordHash: await hashOneTimePassword(password),
        role: p.role,
        unit: p.unit,
        createdAt: now,
        mustChangePassword: true,
        disabled: false,
        lastLoginAt: null,
      };
      const shown: ImportedAccount = {
        username: p.username,
        displayName: p.displayName,
        role: p.role,
        unitText: p.unitText,
        oneTimePassword: password,
      };
      return { account, shown };
    });
    const kept: KeptImport = {
      id: randomUUID(),
      accountId: caller.id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + KEPT_IMPORT_MS),
      accounts: made.map((m) => m.shown),
    };
    try {
      await this.deps.store.createMany(
        made.map((m) => m.account),
        kept,
      );
    } catch (err) {
      if (!(err instanceof UsernameTakenError)) throw err;
      // Taken since the rows were checked: the same answer as if it had been taken before.
      const row = planned.find((p) => usernameKey(p.username) === usernameKey(err.username)) ?? planned[0]!;
      const [problem, words] = takenProblem(row.username, reach);
      throw importRefused([{ line: row.line, username: row.username, problems: [words], codes: [problem] }]);
    }
    await this.deps.audit.recordMany(
      caller,
      made.map(({ account }, i) => ({
        action: 'account_created' as const,
        details: {
          address,
          note: {
            code: 'account_created' as const,
            ...named(account),
            ...(account.displayName !== null && { displayName: account.displayName }),
            role: account.role,
            unit: describeUnit(planned[i]!.unit),
            by: 'csv' as const,
          },
        },
      })),
    );
    return { id: kept.id, accounts: kept.accounts, skipped };
  }

  /**
   * The unit a row's code names, if the caller may give it to an account of that role; else why
   * not: a unit outside the reach is told as such, a code that names no unit as unknown (with
   * the unit within the reach it most likely meant), never the one for the other.
   */
  private async importUnit(caller: Account, code: string, role: Role): Promise<ImportUnit> {
    try {
      return await this.assignableUnit(caller, code, role);
    } catch (err) {
      if (err instanceof ValidationError)
        return { refused: [{ code: 'unit_not_for_role', unit: code, role }, `unit "${code}": ${err.message}`] };
      if (!(err instanceof NotFoundError)) throw err;
    }
    if (code === ARCHIVE_UNIT_ID || (await this.deps.directory.get(code)))
      return {
        refused: [{ code: 'unit_outside_reach', unit: code }, `unit "${code}" is not a unit within your reach`],
      };
    const closest = await nearestUnit(this.deps.directory, caller, code);
    return {
      refused: [
        { code: 'unit_unknown', unit: code, ...(closest && { closest }) },
        `no unit has the code "${code}"${closest ? `: did you mean ${closest.name} ${closest.id}?` : ''}`,
      ],
    };
  }

  /** The caller's own imports whose answers are still kept (not yet taken, not expired). */
  async keptImports(caller: Account): Promise<KeptImportView[]> {
    return (await this.deps.store.keptImports(caller.id, this.deps.clock())).map((k) => ({
      id: k.id,
      createdAt: k.createdAt.toISOString(),
      expiresAt: k.expiresAt.toISOString(),
      count: k.count,
    }));
  }

  /** Hands over the answer of one of the caller's own imports, once; it is then forgotten. */
  async takeKeptImport(caller: Account, id: string): Promise<KeptImportAnswer> {
    const kept = await this.deps.store.takeKeptImport(id, caller.id, this.deps.clock());
    if (!kept)
      throw new NotFoundError(
        `No kept import "${id}" of yours: its passwords were downloaded already, or it expired (after ${KEPT_IMPORT_MS / 3600_000} hours).`,
      );
    return { id: kept.id, accounts: kept.accounts };
  }

  private tokenView(t: ApiTokenRecord, owner: Pick<Account, 'username' | 'displayName'>): TokenView {
    return {
      id: t.id,
      label: t.label,
      accountId: t.accountId,
      username: owner.username,
      displayName: owner.displayName,
      createdAt: t.createdAt.toISOString(),
      expiresAt: t.expiresAt?.toISOString() ?? null,
      lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
      expired: t.expiresAt !== null && t.expiresAt <= this.deps.clock(),
      scopes: t.scopes,
    };
  }

  /** The caller's own API tokens, or (administrators, `reach`) those of every account in its reach; newest first. */
  async listTokens(caller: Account, scope: 'mine' | 'reach'): Promise<TokenView[]> {
    // Only those tokens are read (by owner, or by the reach's units), and their owners once each.
    const newestFirst = (tokens: ApiTokenRecord[]) =>
      tokens.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    if (scope === 'mine' || caller.role !== 'admin')
      return newestFirst(await this.deps.tokens.list({ accounts: [caller.id] })).map((t) => this.tokenView(t, caller));
    const reach = await this.deps.directory.reachOf(caller);
    if (reach.kind === 'nothing') return [];
    const tokens = newestFirst(
      await this.deps.tokens.list(
        reach.kind === 'subtree' ? { units: await this.deps.directory.unitIdsIn(reach) } : undefined,
      ),
    );
    // An owner placed outside the reach (moved meanwhile) is left out.
    const owners = new Map(
      (await this.placeAll(await this.deps.store.getMany(tokens.map((t) => t.accountId))))
        .filter((p) => this.inReach(reach, p))
        .map((p) => [p.account.id, p.account]),
    );
    return tokens.filter((t) => owners.has(t.accountId)).map((t) => this.tokenView(t, owners.get(t.accountId)!));
  }

  /** A token of the caller's own; `parent`: the token the request came with (the new one stays within it). */
  async createToken(
    caller: Account,
    request: NewTokenRequest,
    address: string | null,
    parent?: ApiTokenRecord,
  ): Promise<NewTokenView> {
    const { id, token, record } = await this.deps.tokens.create(caller, { ...request, ...(parent && { parent }) });
    await this.deps.audit.record('token_created', caller, {
      address,
      note: {
        code: 'token_created',
        tokenId: id,
        label: request.label ?? '',
        expiresInDays: request.expiresInDays,
        scopes: record.scopes,
        ...(parent && { withToken: parent.id }),
      },
    });
    return { token, view: this.tokenView(record, caller) };
  }

  /** Revokes the caller's own token, or (administrators) a token of an account in reach. */
  async revokeToken(caller: Account, id: string, address: string | null): Promise<void> {
    const token = await this.deps.tokens.get(id);
    const missing = new NotFoundError(`No API token with the id "${id}" is yours or within your reach.`);
    if (!token) throw missing;
    let owner = caller;
    if (token.accountId !== caller.id) {
      if (caller.role !== 'admin') throw missing;
      try {
        owner = (await this.accountInReach(caller, token.accountId)).account;
      } catch (err) {
        if (err instanceof NotFoundError) throw missing;
        throw err;
      }
    }
    await this.deps.tokens.revoke(id);
    await this.deps.audit.record('token_revoked', caller, {
      address,
      note: { code: 'token_revoked', tokenId: id, label: token.label, ...named(owner) },
    });
  }
}
