import type { Db } from '../embedded/database.js';

/**
 * The day tallies' sums per unit level and day (upload_day_sums), kept by triggers on the day
 * tallies (upload_days) on the embedded store: what the space-saved report reads unless a file
 * name filter picks files (docs/decisions/day-sums.md). A province's decade has a tally per file,
 * unit and day (ten million); summing them took the report 2 to 3 s, summing these (a few
 * thousand to a few hundred thousand rows, by the filter) a few milliseconds.
 *
 * A row sums the tallies of one day in one city (level 1), county (level 2) or town (level 3):
 * the levels the report breaks a subtree down by. A level's columns below it are '' (a city's row
 * at level 1 has county and town ''), as is a level a tally has none of (a city's own unit at level
 * 2: county ''; the report's null). No unit names a level '' (the unit directory's names are never
 * empty), so '' tells no unit from another. `tallies` counts the tallies summed: a row with none
 * goes, so a row is there exactly when a tally of its day and unit is, as the report's groups are.
 */
export const DAY_SUMS_TABLE = `
CREATE TABLE upload_day_sums (
  level         INTEGER NOT NULL,
  city          TEXT NOT NULL,
  county        TEXT NOT NULL,
  town          TEXT NOT NULL,
  day           TEXT NOT NULL,
  week          TEXT NOT NULL,
  month         TEXT NOT NULL,
  tallies       INTEGER NOT NULL,
  uploads       INTEGER NOT NULL,
  saved_uploads INTEGER NOT NULL,
  saved_bytes   INTEGER NOT NULL,
  -- The week and month as the tallies have them (each a function of the day, but written by the
  -- version that wrote the tally): in the key, so a week summed here is the tallies' week.
  PRIMARY KEY (level, city, county, town, day, week, month)
) WITHOUT ROWID;`;

/** The levels kept: city, county, town. */
const LEVELS = [1, 2, 3] as const;

/** A tally's (`row`: new or old) unit columns at `level`, as upload_day_sums keys them. */
const unitAt = (level: number, row: string) => ({
  city: `${row}.city`,
  county: level >= 2 ? `IFNULL(${row}.county, '')` : "''",
  town: level >= 3 ? `IFNULL(${row}.town, '')` : "''",
});

/** The row of upload_day_sums a tally is summed in at `level`. */
const cellOf = (level: number, row: string) => {
  const u = unitAt(level, row);
  return `level = ${level} AND city = ${u.city} AND county = ${u.county} AND town = ${u.town}
    AND day = ${row}.day AND week = ${row}.week AND month = ${row}.month`;
};

/** Adds a tally to its row at every level (the row made if it is the first). */
const addTally = (row: string) =>
  LEVELS.map((level) => {
    const u = unitAt(level, row);
    return `INSERT INTO upload_day_sums (level, city, county, town, day, week, month, tallies, uploads, saved_uploads, saved_bytes)
    VALUES (${level}, ${u.city}, ${u.county}, ${u.town}, ${row}.day, ${row}.week, ${row}.month, 1, ${row}.uploads, ${row}.saved_uploads, ${row}.saved_uploads * ${row}.file_length)
    ON CONFLICT (level, city, county, town, day, week, month) DO UPDATE SET tallies = tallies + 1,
      uploads = uploads + excluded.uploads, saved_uploads = saved_uploads + excluded.saved_uploads,
      saved_bytes = saved_bytes + excluded.saved_bytes;`;
  }).join('\n  ');

/** Takes a tally out of its row at every level (the row gone with its last tally). */
const takeTally = (row: string) =>
  LEVELS.map(
    (level) => `DELETE FROM upload_day_sums WHERE ${cellOf(level, row)} AND tallies = 1;
  UPDATE upload_day_sums SET tallies = tallies - 1, uploads = uploads - ${row}.uploads,
    saved_uploads = saved_uploads - ${row}.saved_uploads, saved_bytes = saved_bytes - ${row}.saved_uploads * ${row}.file_length
  WHERE ${cellOf(level, row)};`,
  ).join('\n  ');

/** A tally updated in place: same day (week, month) and unit levels; its counts (or length) changed. */
const SAME_ROW = `old.day = new.day AND old.week = new.week AND old.month = new.month AND old.city = new.city
  AND old.county IS new.county AND old.town IS new.town`;

/**
 * The triggers: a tally counted (made, or one upload more or fewer, or a saved upload moved to or
 * from it by the holder's rule) changes its rows in place; a tally moved to another day or unit
 * (nothing does that now) is taken out of its rows and added to its new ones. Replaced at every
 * start, so data directories of earlier versions get them as they are now.
 */
const DAY_SUMS_TRIGGERS = `
DROP TRIGGER IF EXISTS upload_day_sums_insert;
CREATE TRIGGER upload_day_sums_insert AFTER INSERT ON upload_days BEGIN
  ${addTally('new')}
END;
DROP TRIGGER IF EXISTS upload_day_sums_update;
CREATE TRIGGER upload_day_sums_update AFTER UPDATE ON upload_days WHEN ${SAME_ROW} BEGIN
  ${LEVELS.map(
    (level) => `UPDATE upload_day_sums SET uploads = uploads - old.uploads + new.uploads,
    saved_uploads = saved_uploads - old.saved_uploads + new.saved_uploads,
    saved_bytes = saved_bytes - old.saved_uploads * old.file_length + new.saved_uploads * new.file_length
  WHERE ${cellOf(level, 'new')};`,
  ).join('\n  ')}
END;
DROP TRIGGER IF EXISTS upload_day_sums_move;
CREATE TRIGGER upload_day_sums_move AFTER UPDATE ON upload_days WHEN NOT (${SAME_ROW}) BEGIN
  ${takeTally('old')}
  ${addTally('new')}
END;
DROP TRIGGER IF EXISTS upload_day_sums_delete;
CREATE TRIGGER upload_day_sums_delete AFTER DELETE ON upload_days BEGIN
  ${takeTally('old')}
END;
`;

/** upload_day_sums's rows summed from the day tallies: the towns' from the tallies, each level above from the one below. */
const SUM_DAY_TALLIES = `
INSERT INTO upload_day_sums (level, city, county, town, day, week, month, tallies, uploads, saved_uploads, saved_bytes)
  SELECT 3, city, IFNULL(county, ''), IFNULL(town, ''), day, week, month, COUNT(*), SUM(uploads), SUM(saved_uploads), SUM(saved_uploads * file_length)
  FROM upload_days INDEXED BY upload_days_unit_sums GROUP BY city, county, town, day, week, month;
INSERT INTO upload_day_sums (level, city, county, town, day, week, month, tallies, uploads, saved_uploads, saved_bytes)
  SELECT 2, city, county, '', day, week, month, SUM(tallies), SUM(uploads), SUM(saved_uploads), SUM(saved_bytes)
  FROM upload_day_sums WHERE level = 3 GROUP BY city, county, day, week, month;
INSERT INTO upload_day_sums (level, city, county, town, day, week, month, tallies, uploads, saved_uploads, saved_bytes)
  SELECT 1, city, '', '', day, week, month, SUM(tallies), SUM(uploads), SUM(saved_uploads), SUM(saved_bytes)
  FROM upload_day_sums WHERE level = 2 GROUP BY city, day, week, month;
`;

/**
 * Makes upload_day_sums, summed from the day tallies, where a data directory has none yet (made
 * before it, or its seeding dropped it), and its triggers; in one transaction, so no tally is
 * written in between. Run after the indexes on the totals: the towns' sums read the tallies in
 * the order of upload_days_unit_sums, which is theirs. A province's decade sums its ten million
 * tallies once, at its first start after the upgrade (README: the figure).
 */
export function keepDaySums(db: Db): void {
  db.transaction(() => {
    if (
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'upload_day_sums'").get() === undefined
    ) {
      db.exec(DAY_SUMS_TABLE);
      db.exec(SUM_DAY_TALLIES);
    }
    db.exec(DAY_SUMS_TRIGGERS);
  }).immediate();
}

/** The names of upload_day_sums's triggers (a seeding drops them with the table and has them made again). */
export const DAY_SUMS_TRIGGER_NAMES = [
  'upload_day_sums_insert',
  'upload_day_sums_update',
  'upload_day_sums_move',
  'upload_day_sums_delete',
] as const;
