/**
 * The indexes and triggers on the catalog, the ledger and its totals as a data directory made on
 * 2026-11-28 holds them, before the ledger declared the per-file sums (ledger_files, its triggers)
 * and the report indexes that the reports declared until then: copied from such a directory's
 * sqlite_master, for the upgrade's test (an object renamed without a migration would be left
 * beside its new name, and a trigger would then count twice).
 */
export const TOTALS_BEFORE_LEDGER_OWNED_THEM: ReadonlyArray<{ type: 'index' | 'trigger'; name: string; sql: string }> =
  [
    {
      type: 'index',
      name: 'catalog_collisions',
      sql: 'CREATE INDEX catalog_collisions ON catalog (md5) WHERE md5_collision = 1',
    },
    {
      type: 'index',
      name: 'catalog_file_sizes',
      sql: 'CREATE INDEX catalog_file_sizes ON catalog (file_no, length, file_name, file_id)',
    },
    { type: 'index', name: 'catalog_upload_date', sql: 'CREATE INDEX catalog_upload_date ON catalog (upload_date)' },
    {
      type: 'index',
      name: 'ledger_file',
      sql: 'CREATE INDEX ledger_file ON ledger (file_no, unit_id, user_id, upload_count, upload_time, last_upload_time, city, county, town, user_name, unit)',
    },
    {
      type: 'index',
      name: 'ledger_files_shared',
      sql: 'CREATE INDEX ledger_files_shared ON ledger_files (units DESC, file_id, file_no, users, uploads, first, last) WHERE units >= 2',
    },
    { type: 'index', name: 'ledger_names_file', sql: 'CREATE INDEX ledger_names_file ON ledger_names (file_no)' },
    {
      type: 'index',
      name: 'ledger_repeat_files',
      sql: 'CREATE INDEX ledger_repeat_files ON ledger (file_no, unit_id, user_id, upload_count, upload_time, last_upload_time, user_name, city, county, town, upload_file_name, unit)\n  WHERE upload_count >= 2',
    },
    {
      type: 'index',
      name: 'ledger_unit_files',
      sql: 'CREATE INDEX ledger_unit_files ON ledger (unit_id, file_no, user_id, upload_count, upload_time, last_upload_time)',
    },
    {
      type: 'index',
      name: 'upload_days_day_sums',
      sql: 'CREATE INDEX upload_days_day_sums ON upload_days (day, week, month, city, county, town, uploads, saved_uploads, file_length)',
    },
    {
      type: 'index',
      name: 'upload_days_unit_sums',
      sql: 'CREATE INDEX upload_days_unit_sums ON upload_days (city, county, town, day, week, month, uploads, saved_uploads, file_length)',
    },
    {
      type: 'trigger',
      name: 'ledger_files_counted',
      sql: 'CREATE TRIGGER ledger_files_counted AFTER UPDATE ON ledger WHEN old.file_no = new.file_no AND old.unit_id = new.unit_id AND old.user_id = new.user_id\n  AND old.upload_time = new.upload_time AND new.last_upload_time >= old.last_upload_time BEGIN\n  UPDATE ledger_files SET uploads = uploads - old.upload_count + new.upload_count, last = MAX(last, new.last_upload_time)\n  WHERE file_no = new.file_no;\nEND',
    },
    {
      type: 'trigger',
      name: 'ledger_files_delete',
      sql: 'CREATE TRIGGER ledger_files_delete AFTER DELETE ON ledger BEGIN \n  DELETE FROM ledger_files WHERE file_no = old.file_no;\n  INSERT INTO ledger_files (file_no, file_id, units, users, uploads, first, last)\n    SELECT l.file_no, c.file_id, COUNT(DISTINCT l.unit_id), COUNT(DISTINCT l.user_id), SUM(l.upload_count), MIN(l.upload_time), MAX(l.last_upload_time)\n    FROM ledger l JOIN catalog c USING (file_no) WHERE l.file_no = old.file_no GROUP BY l.file_no; END',
    },
    {
      type: 'trigger',
      name: 'ledger_files_insert',
      sql: 'CREATE TRIGGER ledger_files_insert AFTER INSERT ON ledger BEGIN\n  INSERT INTO ledger_files (file_no, file_id, units, users, uploads, first, last)\n    VALUES (new.file_no, (SELECT file_id FROM catalog WHERE file_no = new.file_no), 1, 1, new.upload_count,\n      new.upload_time, new.last_upload_time)\n  ON CONFLICT (file_no) DO UPDATE SET\n    units = units + NOT EXISTS (SELECT 1 FROM ledger WHERE file_no = new.file_no AND unit_id = new.unit_id AND id <> new.id),\n    users = users + NOT EXISTS (SELECT 1 FROM ledger WHERE file_no = new.file_no AND user_id = new.user_id AND id <> new.id),\n    uploads = uploads + new.upload_count,\n    first = MIN(first, new.upload_time),\n    last = MAX(last, new.last_upload_time);\nEND',
    },
    {
      type: 'trigger',
      name: 'ledger_files_update',
      sql: 'CREATE TRIGGER ledger_files_update AFTER UPDATE ON ledger WHEN NOT (old.file_no = new.file_no AND old.unit_id = new.unit_id AND old.user_id = new.user_id\n  AND old.upload_time = new.upload_time AND new.last_upload_time >= old.last_upload_time) BEGIN\n  \n  DELETE FROM ledger_files WHERE file_no IN (old.file_no, new.file_no);\n  INSERT INTO ledger_files (file_no, file_id, units, users, uploads, first, last)\n    SELECT l.file_no, c.file_id, COUNT(DISTINCT l.unit_id), COUNT(DISTINCT l.user_id), SUM(l.upload_count), MIN(l.upload_time), MAX(l.last_upload_time)\n    FROM ledger l JOIN catalog c USING (file_no) WHERE l.file_no IN (old.file_no, new.file_no) GROUP BY l.file_no;\nEND',
    },
  ];
