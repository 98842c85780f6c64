// Services the store's tests use to check what a store answers as a service shapes it (the reports'
// savings and cross-unit rows, a receipt's size). The store imports no service, its conformance
// suites and tests included: they reach services here, where tests meet the products
// (docs/architecture.md, "Import boundaries").
export { ReportCalendar } from '../../server/services/calendar.js';
export { receiptBytes } from '../../server/services/receipts.js';
export { ReportService } from '../../server/services/reports.js';
