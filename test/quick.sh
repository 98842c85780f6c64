#!/bin/sh
# npm run test:quick: builds what the quick tests need, then runs them (test/quick.ts).
set -eu
cd "$(dirname "$0")/.."

# V8's compiled code for the modules every test process loads (Express, zod, the server), kept
# between runs and processes: a test process starts with ~0.1 s less CPU. Node checks each
# module's source before it uses the cache.
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-dist/.compile-cache}"

# The TypeScript compiled file by file, without the type check (test/quick-build.ts: the
# JavaScript tsc -b writes, in a third of its time); npm run typecheck checks the types. The HTTP
# tests serve the browser app, so a fresh clone builds it once, with Vite alone and alongside: its
# type check is npm run typecheck's and npm run build's, and these tests do not look at the app
# itself (the browser suite does, after npm run build).
node test/quick-build.ts &
build_pid=$!
if [ ! -f dist/public/index.html ]; then vite build client --logLevel warn || { wait "$build_pid"; exit 1; }; fi
wait "$build_pid"

# The tests' data directories (a SQLite database and content files each, some 250 in a run) in
# memory where the system has a file system there: a new database file is synced to disk eight
# times before it is closed, and each test of a server opens one. npm test keeps them on disk.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi

# test/quick.ts picks the files, the longest first.
exec node --enable-source-maps dist/test/quick.js
