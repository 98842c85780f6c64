import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';
import { NotFoundError } from '../../errors.js';

/** Where `npm run build` puts the browser app (client/ built by Vite), next to the compiled server. */
export const DEFAULT_CLIENT_DIR = fileURLToPath(new URL('../../../public', import.meta.url));

/**
 * Serves the clerks' browser app from the API's origin: hashed assets cached for a year, the page
 * itself always revalidated so a new release is picked up at the next visit.
 */
export function clientAppRoutes(clientDir: string): Router {
  const router = Router();
  const indexFile = path.join(clientDir, 'index.html');
  if (!fs.existsSync(indexFile)) {
    throw new Error(`The browser app is not built (${indexFile} is missing): run "npm run build".`);
  }
  router.use(
    '/assets',
    express.static(path.join(clientDir, 'assets'), { immutable: true, maxAge: '365d', index: false }),
    () => {
      // An asset of an older release (the page was open across an upgrade): reloading fixes it.
      throw new NotFoundError('This part of the app no longer exists: reload the page.');
    },
  );
  // The tab's icon: the page links the SVG; browsers and tools that ask for /favicon.ico get it too.
  for (const icon of ['favicon.svg', 'favicon.ico'])
    router.get(`/${icon}`, (_req, res) => res.sendFile(icon, { root: clientDir, maxAge: '1d' }));
  router.get('/', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    // Relative to the app's folder: `send` refuses a path with a dot-folder in it (an installation
    // under ~/.local) unless the dots are in its root.
    res.sendFile('index.html', { root: clientDir });
  });
  return router;
}
