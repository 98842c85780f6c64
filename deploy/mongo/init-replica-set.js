// Run by the one-shot service mongo-init (docker-compose.yml, profile "production") with
// `mongosh --nodb`, in mongo1's network namespace: localhost is mongo1. The members run with a
// keyfile, so access control is on. In MongoDB's documented order
// ("Deploy Self-Managed Replica Set With Keyfile Authentication"):
//   1. initiate rs0 through the localhost exception (only before any user exists),
//   2. create the administrator through the same exception, on the primary,
//   3. log in as the administrator and make sure the archive's user and the backup user exist,
//      with the passwords of .env (changed there, they are changed here at the next start).
// Every step is skipped when already done: safe on every start. Exit code 0 = rs0 has a primary
// and the users are there.
//
// Passwords come as files (Docker secrets: MONGO_ADMIN_PASSWORD_FILE=/run/secrets/...), so they
// are not in the container's environment; the plain variables are read when no file is named.
const ADMIN_USER = 'admin';
const ARCHIVE_USER = 'archive';
const ARCHIVE_DB = 'archive';
const BACKUP_USER = 'backup';
const config = {
  _id: 'rs0',
  // mongo1 is preferred as primary: the localhost exception works on the member this runs beside.
  members: [
    { _id: 0, host: 'mongo1:27017', priority: 2 },
    { _id: 1, host: 'mongo2:27017', priority: 1 },
    { _id: 2, host: 'mongo3:27017', priority: 1 },
  ],
};
const WAIT_MS = 120_000;
// Member TLS (deploy/mongo/member-tls.yml): URI options such as "tls=true&tlsCAFile=/tls/ca.pem".
const TLS_OPTIONS = process.env.MONGO_TLS_OPTIONS ? `&${process.env.MONGO_TLS_OPTIONS}` : '';
// MongoDB error codes.
const UNAUTHORIZED = 13;
const AUTHENTICATION_FAILED = 18;
const ALREADY_INITIALIZED = 23;

function fail(message) {
  print(`rs0: ${message}`);
  quit(1);
}

/** "hello" needs no login: whether rs0 exists here, and whether this member is its primary. */
function hello(conn) {
  return conn.getDB('admin').runCommand({ hello: 1 });
}

function waitFor(what, ready) {
  const deadline = Date.now() + WAIT_MS;
  while (!ready()) {
    if (Date.now() > deadline) fail(`${what}: not after ${WAIT_MS / 1000} s`);
    sleep(1000);
  }
}

/**
 * NAME_FILE's content (a Docker secret) without its final line break, else NAME, else "". Compose
 * makes no file for a variable that .env leaves empty: that is "" too, and refused below.
 */
function secret(name) {
  const file = process.env[`${name}_FILE`];
  if (!file) return process.env[name] ?? '';
  const fs = require('fs');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '') : '';
}

const adminPassword = secret('MONGO_ADMIN_PASSWORD');
const archivePassword = secret('ARCHIVE_DB_PASSWORD');
const backupPassword = secret('MONGO_BACKUP_PASSWORD');
for (const [name, value] of [
  ['MONGO_ADMIN_PASSWORD', adminPassword],
  ['ARCHIVE_DB_PASSWORD', archivePassword],
  ['MONGO_BACKUP_PASSWORD', backupPassword],
]) {
  // Letters and digits only: the archive's password is part of MONGODB_URI.
  if (!/^[A-Za-z0-9]{16,}$/.test(value))
    fail(`set ${name} in .env to at least 16 letters and digits (e.g. openssl rand -hex 24), then start again`);
}

let conn;
waitFor('mongo1 answers on localhost', () => {
  try {
    conn = new Mongo(`mongodb://localhost:27017/admin?directConnection=true${TLS_OPTIONS}`);
    return true;
  } catch {
    return false;
  }
});

// 1. The replica set.
if (hello(conn).setName === undefined) {
  // Through the localhost exception: nobody can log in yet. (mongosh throws a command's error;
  // an answer with ok 0 is taken the same way.)
  let initiated;
  try {
    initiated = conn.getDB('admin').runCommand({ replSetInitiate: config });
  } catch (err) {
    initiated = { ok: 0, code: err.code, errmsg: err.message };
  }
  if (initiated.ok === 1) print('rs0: initiated with mongo1, mongo2, mongo3');
  // "Unauthorized": users exist, so the localhost exception is closed, and users are only made
  // after the set was initiated (step 2). A restarted mongo1 that has not loaded its replica-set
  // configuration yet answers "hello" without a set name: it is on its way, wait for it below.
  else if (initiated.code === UNAUTHORIZED) print('rs0: initiated before (users exist); waiting for mongo1 to rejoin');
  else if (initiated.code !== ALREADY_INITIALIZED) fail(`could not initiate: ${initiated.errmsg}`);
}
waitFor('rs0 has a primary', () => {
  const h = hello(conn);
  return h.setName === 'rs0' && typeof h.primary === 'string';
});

// 2. The administrator, unless it exists (then the localhost exception is closed and logging in works).
const admin = conn.getDB('admin');
let loggedIn = false;
try {
  loggedIn = admin.auth(ADMIN_USER, adminPassword).ok === 1;
} catch (err) {
  if (err.code !== AUTHENTICATION_FAILED) fail(`could not log in as ${ADMIN_USER}: ${err.message}`);
}
if (!loggedIn) {
  // Users are created on the primary; mongo1 becomes it (priority 2) once it has caught up.
  waitFor('mongo1 is the primary', () => hello(conn).isWritablePrimary === true);
  try {
    admin.createUser({ user: ADMIN_USER, pwd: adminPassword, roles: [{ role: 'root', db: 'admin' }] });
    print(`rs0: administrator "${ADMIN_USER}" created`);
  } catch (err) {
    if (err.code === UNAUTHORIZED)
      fail(
        `users exist already, but MONGO_ADMIN_PASSWORD is not "${ADMIN_USER}"'s password: put the right one in .env`,
      );
    fail(`could not create the administrator: ${err.message}`);
  }
  if (admin.auth(ADMIN_USER, adminPassword).ok !== 1) fail(`could not log in as the new administrator "${ADMIN_USER}"`);
}

// 3. The users, on the primary.
waitFor('rs0 has a primary', () => typeof hello(conn).primary === 'string');
const primary = new Mongo(`mongodb://${hello(conn).primary}/admin?directConnection=true${TLS_OPTIONS}`);
if (primary.getDB('admin').auth(ADMIN_USER, adminPassword).ok !== 1)
  fail(`could not log in to the primary as "${ADMIN_USER}"`);

/** Creates the user in db, or sets its password and roles to these. */
function ensureUser(db, user, pwd, roles) {
  if (db.getUser(user) === null) {
    db.createUser({ user, pwd, roles });
    print(`rs0: user "${user}" created`);
  } else {
    db.updateUser(user, { pwd, roles });
    print(`rs0: user "${user}" up to date`);
  }
}

// The archive's: readWrite on its database (createIndex included).
ensureUser(primary.getDB(ARCHIVE_DB), ARCHIVE_USER, archivePassword, [{ role: 'readWrite', db: ARCHIVE_DB }]);
// mongodump --oplog of the whole deployment needs "backup"; mongorestore --oplogReplay needs
// "restore" (docs/deployment.md, Backups). Together they read and write every database: its
// password is worth as much as the administrator's.
ensureUser(primary.getDB('admin'), BACKUP_USER, backupPassword, [
  { role: 'backup', db: 'admin' },
  { role: 'restore', db: 'admin' },
]);
print(`rs0: primary is ${hello(conn).primary}`);
