import type { AddressInfo } from 'node:net';
import { appDeps, composeServices } from './compose.js';
import { loadConfig } from './config.js';
import { ConfigError } from './errors.js';
import { createApp } from './http/app.js';
import { answerUnparsableRequests } from './http/unparsable-requests.js';
import { createLogger, type Logger } from './log.js';
import type { FixityService } from './services/fixity.js';
import { shutDown } from './shutdown.js';
import { openStoreRetrying } from './store/open.js';

/** The composition root: config → store → services → HTTP. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // Handlers first: opening the store may retry for a minute, and Node as PID 1 (a container)
  // ignores a signal it has no handler for, so `docker stop` would wait and then kill. Until the
  // server listens nothing is in progress that an exit could lose (the store writes atomically).
  let onSignal = (signal: string): void => {
    logger.info({ signal }, 'stopping during start-up');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (s) => onSignal(s));
  // Said before and after: the first start of a version that changes the embedded store's tables
  // rebuilds them (a minute or so for a million ledger entries), with nothing else to show for it.
  const opening = Date.now();
  logger.info({ store: config.store }, 'opening the store');
  const store = await openStoreRetrying(config, config.storeConnectTimeoutMs, (attempt, delayMs, err) =>
    logger.warn({ attempt, retryInSeconds: delayMs / 1000 }, `${err.message}; retrying`),
  );
  const opened = Date.now();
  logger.info({ ms: opened - opening }, 'store opened');
  const archive = composeServices(store, config, undefined, logger);

  // The directory first: accounts of an earlier version are then placed in it.
  const started = Date.now();
  const loaded = await archive.services.directory.load(config.unitRegions);
  if (loaded.some((r) => r.added > 0))
    logger.info({ regions: loaded, ms: Date.now() - started }, 'unit directory loaded');
  const directoryMs = Date.now() - started;
  // Reads every account once per data directory (seconds at 100,000): said, as it is slow only once.
  const placing = Date.now();
  const { mapped, unmapped, everyAccount } = await archive.services.directory.placeEarlierAccounts(() =>
    logger.info('placing the accounts of an earlier version in the unit directory: every account is read, once'),
  );
  const placingMs = Date.now() - placing;
  if (everyAccount) logger.info({ ms: placingMs }, 'every account read for the unit directory');
  if (mapped.length > 0) logger.info({ accounts: mapped.length }, 'accounts placed in the unit directory');
  if (unmapped.length > 0)
    logger.warn(
      { accounts: unmapped.map((a) => a.username) },
      'accounts whose units are not in the unit directory: assign them under 单位 / Units (npm run archive -- units unmapped)',
    );

  const firstAdmin = await archive.services.accounts.bootstrapAdmin();
  if (firstAdmin) {
    // Straight to the terminal, never into the structured log: it is a credential.
    process.stdout.write(
      [
        '',
        '  The archive has no accounts yet. A first administrator was created:',
        `    username: ${firstAdmin.username}`,
        `    one-time password: ${firstAdmin.password}`,
        '  It is shown only this once. Log in and choose a new password (PUT /api/session/password);',
        '  then create accounts in the browser, under 账号管理 / Accounts.',
        '',
        '',
      ].join('\n'),
    );
    // After the password is shown: an unrecorded event must not leave the archive without its admin.
    const admin = await archive.services.accounts.getByUsername(firstAdmin.username);
    await archive.services.audit.record('account_created', admin, {
      address: null,
      note: { code: 'account_created', role: 'admin', by: 'first_start' },
    });
  }

  // Sweeps what interrupted uploads left behind; any instance may do it, the steps are idempotent.
  const sweeper =
    config.gcIntervalMs > 0
      ? setInterval(() => {
          archive.gc.run().then(
            (report) => logger.info({ gc: report }, 'garbage collected'),
            (err: unknown) => logger.error({ err }, 'garbage collection failed'),
          );
        }, config.gcIntervalMs).unref()
      : undefined;
  const fixity =
    config.verifyIntervalMs > 0 ? scheduleFixity(archive.services.fixity, config.verifyIntervalMs, logger) : undefined;
  // Fingerprints made under other settings are redone (by whichever instance gets there first).
  archive.services.nearDuplicates
    .adoptSettings()
    .catch((err: unknown) => logger.error({ err }, 'could not adopt the near-duplicate settings'));
  // Files stored before search by content existed are read once more, for their texts.
  archive.services.textIndexing
    .backfill()
    .catch((err: unknown) => logger.error({ err }, 'could not queue the stored files for search by content'));
  if (config.nearDuplicatePollMs > 0) archive.services.nearDuplicates.start(config.nearDuplicatePollMs);

  let draining = false;
  const app = createApp(appDeps(store, archive, config, logger, () => draining));
  const server = app.listen(config.port, config.host);
  answerUnparsableRequests(server);

  // Installed before anyone can learn our port: from now on a signal finishes requests and closes
  // the store instead of exiting on the spot.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    draining = true;
    logger.info(
      { signal, graceSeconds: config.shutdownGraceMs / 1000 },
      'shutting down: no new connections, finishing requests in progress',
    );
    setTimeout(() => {
      logger.error('shutdown took too long; exiting without closing the store');
      process.exit(1);
    }, config.shutdownGraceMs + 15_000).unref();
    clearInterval(sweeper);
    fixity?.stop();
    await shutDown({
      server,
      graceMs: config.shutdownGraceMs,
      // A fixity check in progress (scheduled or started by an administrator) ends between two
      // files; the fingerprinting after its current batch.
      stopBackground: () => Promise.all([archive.services.fixity.stop(), archive.services.nearDuplicates.stop()]),
      close: async () => {
        // Each cut-off upload persists what arrived, records its offset and frees its lock first.
        await archive.services.resumable.drain();
        await archive.digests.close();
        await archive.textReader.close();
        await archive.services.pageImages.close();
        await store.close();
      },
      logger,
    });
    logger.info('shutdown complete');
    process.exit(0);
  };
  onSignal = (signal: string) =>
    void stop(signal).catch((err: unknown) => {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    });

  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ConfigError(`cannot listen on ${config.host}:${config.port}: ${err.code ?? err.message}`)),
    );
  });
  // Large uploads may take hours: no overall request deadline, but an idle socket is closed.
  server.requestTimeout = 0;
  server.timeout = 120_000;
  const { address, port } = server.address() as AddressInfo;
  // What the start took, by step (issue 43: at most 5 s at a province's size).
  const startUp = {
    storeMs: opened - opening,
    directoryMs,
    placingMs,
    // Since the process began: loading the modules included.
    ms: Math.round(performance.now()),
  };
  logger.info({ address, port, store: store.kind, startUp }, `archive listening on http://${address}:${port}`);
}

/**
 * Runs the fixity check when due: the schedule counts from the last check's start as recorded
 * in the store, so restarts do not reset it and several instances run one check between them.
 */
function scheduleFixity(fixity: FixityService, intervalMs: number, logger: Logger): { stop(): void } {
  let running: Promise<unknown> | undefined;
  const tick = async () => {
    if (!(await fixity.due(intervalMs))) return;
    const result = await fixity.run('schedule');
    if (!result) return;
    const summary = { ...result, problems: result.problems.length };
    if (result.state === 'failed')
      logger.error(
        { verification: summary },
        `fixity check found ${result.missing} missing and ${result.corrupted} corrupted file(s)`,
      );
    else logger.info({ verification: summary }, `fixity check ${result.state}`);
  };
  const start = () => {
    if (running) return;
    running = tick()
      .catch((err: unknown) => logger.error({ err }, 'fixity check failed'))
      .finally(() => (running = undefined));
  };
  // Soon after the start, then every few minutes (or the interval, if shorter) to see if it is due.
  const first = setTimeout(start, 5_000).unref();
  const timer = setInterval(start, Math.min(intervalMs, 5 * 60_000)).unref();
  return {
    stop() {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`archive: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`archive: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
