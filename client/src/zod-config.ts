import { z } from 'zod';

// The shared request schemas (shared/) are built when the app loads. Zod would first probe whether it
// may compile parsers with `new Function`, which the page's CSP (no 'unsafe-eval') refuses, and
// the browser reports every such refusal as a violation. The app never parses with them anyway.
// Imported first in main.tsx: the setting is read as each schema is built.
z.config({ jitless: true });
