import type { Principal } from '../services/sessions.js';
import 'pino-http';

declare global {
  // Express types its request in a global namespace: augmenting it is the only way to add a field.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by the authentication middleware for a logged-in caller or a valid API token. */
      principal?: Principal;
    }
  }
}

export {};
