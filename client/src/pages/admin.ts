// The administrators' pages but the reports, in a chunk of their own: see admin-pages.tsx.
export { AuditPage } from './audit.js';
export { FixityPage } from './fixity.js';
export { AccountsPage } from './accounts.js';
export { UnitsPage } from './units.js';
export { HoldsPage } from './holds.js';
export { DisposalsPage } from './disposals.js';
