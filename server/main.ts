import type { AddressInfo } from 'node:net';
import { appDeps, composeServices } from './compose.js';
import { loadConfig } from './config.js';
import { ConfigError } from './errors.js';
import { createApp } from './http/app.js';
import { createLogger } from './log.js';
import { openStore } from './store/open.js';

/** The composition root: config → store → services → HTTP. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const store = await openStore(config);
  const archive = composeServices(store, config);

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
        '  then create clerks with: npm run archive -- user add <username> --role clerk --unit <id> --city <name> ...',
        '',
        '',
      ].join('\n'),
    );
    // After the password is shown: an unrecorded event must not leave the archive without its admin.
    const admin = await archive.services.accounts.getByUsername(firstAdmin.username);
    await archive.services.audit.record('account_created', admin, { address: null, detail: 'admin with a one-time password, at the first start' });
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

  const app = createApp(appDeps(store, archive, config, logger));
  const server = app.listen(config.port, config.host);

  // Installed before anyone can learn our port: a signal arriving without a handler would kill
  // the process on the spot instead of closing the store cleanly.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    clearInterval(sweeper);
    server.close(async () => {
      await archive.digests.close();
      await store.close();
      process.exit(0);
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err: NodeJS.ErrnoException) => reject(new ConfigError(`cannot listen on ${config.host}:${config.port}: ${err.code ?? err.message}`)));
  });
  // Large uploads may take hours: no overall request deadline, but an idle socket is closed.
  server.requestTimeout = 0;
  server.timeout = 120_000;
  const { address, port } = server.address() as AddressInfo;
  logger.info({ address, port, store: store.kind }, `archive listening on http://${address}:${port}`);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`archive: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`archive: failed to start: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
