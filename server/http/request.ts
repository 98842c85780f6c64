import type { Principal } from '../services/sessions.js';
import 'pino-http';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by the authentication middleware for a logged-in caller or a valid API token. */
      principal?: Principal;
    }
  }
}

export {};
