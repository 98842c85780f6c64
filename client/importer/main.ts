import { runImportCommand } from './import-command.js';

/**
 * `npm run import -- …`: the bulk importer, which brings a legacy file-system archive into a
 * running archive over its HTTP API (a client of the API, like the browser app; it imports
 * nothing of the server). `npm run archive -- import …` runs this too.
 */
process.exitCode = await runImportCommand(process.argv.slice(2));
