// The administrators' pages, in a chunk of their own (with Chart.js): see admin-pages.tsx.
export { AuditPage } from './audit.js';
export { FixityPage } from './fixity.js';
export { ReportsPage } from './reports/index.js';
export { AccountsPage } from './accounts.js';
export { UnitsPage } from './units.js';
export { HoldsPage } from './holds.js';
export { DisposalsPage } from './disposals.js';
