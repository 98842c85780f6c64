// Run by the one-shot service mongo-init (docker-compose.yml, profile "production") with mongosh
// against mongo1. Idempotent: initiates replica set rs0 on the first start only, then waits until
// it has a primary, so the archive's instances start against a writable set. Exit code 0 = ready.
const config = {
  _id: 'rs0',
  members: [
    { _id: 0, host: 'mongo1:27017' },
    { _id: 1, host: 'mongo2:27017' },
    { _id: 2, host: 'mongo3:27017' },
  ],
};
const NOT_YET_INITIALIZED = 94;
const ALREADY_INITIALIZED = 23;
const WAIT_MS = 120_000;

function initiated() {
  try {
    rs.status();
    return true;
  } catch (err) {
    if (err.code === NOT_YET_INITIALIZED) return false;
    throw err;
  }
}

function primaryName() {
  try {
    const primary = rs.status().members.find((m) => m.state === 1);
    return primary ? primary.name : undefined;
  } catch {
    return undefined; // the member is still changing state; ask again
  }
}

try {
  if (initiated()) {
    print('rs0: already initiated');
  } else {
    try {
      rs.initiate(config);
      print('rs0: initiated with mongo1, mongo2, mongo3');
    } catch (err) {
      // Another run got there first.
      if (err.code !== ALREADY_INITIALIZED) throw err;
      print('rs0: already initiated');
    }
  }
  const deadline = Date.now() + WAIT_MS;
  let primary = primaryName();
  while (primary === undefined) {
    if (Date.now() > deadline) throw new Error(`rs0 has no primary after ${WAIT_MS / 1000} s`);
    sleep(1000);
    primary = primaryName();
  }
  print(`rs0: primary is ${primary}`);
} catch (err) {
  print(`rs0: ${err.message}`);
  quit(1);
}
