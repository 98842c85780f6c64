import { Router } from 'express';
import type { Logger } from '../../log.js';
import type { AuditService } from '../../services/audit.js';
import type { FixityService } from '../../services/fixity.js';
import { ConflictError, ForbiddenError } from '../../errors.js';
import type { FileService } from '../../services/files.js';
import type { UnitDirectory } from '../../services/unit-directory.js';
import { requireAuth } from '../auth.js';

/**
 * `/api/verification`: the fixity check for administrators: its last result (or the progress of
 * the one running), and starting one now.
 */
export function verificationRoutes(deps: {
  fixity: FixityService;
  audit: AuditService;
  files: Pick<FileService, 'verificationInReach'>;
  directory: Pick<UnitDirectory, 'reachOf'>;
  logger: Logger;
  intervalMs: number;
}): Router {
  const router = Router();
  router.get('/', requireAuth(['admin']), async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const last = await deps.fixity.last();
    res.json({
      last: last ? await deps.files.verificationInReach(req.principal!.account, last) : null,
      intervalHours: deps.intervalMs / 3600_000,
    });
  });
  router.post('/', requireAuth(['admin']), async (req, res) => {
    if ((await deps.directory.reachOf(req.principal!.account)).kind !== 'everything')
      throw new ForbiddenError(
        'The fixity check reads the whole archive: the archive’s top-level administrators start it.',
      );
    if ((await deps.fixity.last())?.state === 'running')
      throw new ConflictError('A fixity check is running already; its progress is shown here.', 'fixity_running');
    await deps.audit.record('verification_started', req.principal!.account, { address: req.ip ?? null });
    // Runs in the background: it reads every stored file. The answer waits until the check is
    // recorded as running, so whoever asks next sees it, not the one before. Another instance may
    // win the race to start; then this run answers undefined and does nothing.
    let started!: () => void;
    const running = new Promise<'started'>((resolve) => (started = () => resolve('started')));
    const work = deps.fixity.run('command', { onStarted: started });
    work.then(
      (result) =>
        result &&
        deps.logger.info({ verification: { ...result, problems: result.problems.length } }, 'fixity check finished'),
      (err: unknown) => deps.logger.error({ err }, 'fixity check failed'),
    );
    if ((await Promise.race([running, work])) === undefined)
      throw new ConflictError('A fixity check is running already; its progress is shown here.', 'fixity_running');
    res.status(202).json({ status: 'started' });
  });
  return router;
}
