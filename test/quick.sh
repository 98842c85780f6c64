#!/bin/sh
# npm run test:quick: the store, service, HTTP and unit tests, without the browser, fault and
# whole-process suites (npm test runs everything). Builds what they need first.
set -eu
cd "$(dirname "$0")/.."

# V8's compiled code for the modules every test process loads (Express, zod, the server), kept
# between runs and processes: a test process starts with ~0.1 s less CPU. Node checks each
# module's source before it uses the cache.
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-dist/.compile-cache}"

# The HTTP tests serve the browser app, so a fresh clone builds it once, with Vite alone and
# alongside tsc: its type check is npm run typecheck's and npm run build's, and these tests do not
# look at the app itself (the browser suite does, after npm run build).
tsc -b tsconfig.json &
tsc_pid=$!
if [ ! -f dist/public/index.html ]; then vite build client --logLevel warn || { wait "$tsc_pid"; exit 1; }; fi
wait "$tsc_pid"

# The files that take longest first, so none of them starts last with the other core idle
# (node --test runs files in the order given; the embedded store's, which kills processes, took
# 37 s of 258 when it came last). Measured one file at a time, 2026-11-28.
first="
dist/test/store/embedded.test.js
dist/test/client/content-hash.test.js
dist/test/http/tus.test.js
dist/test/http/token-scopes.test.js
dist/test/http/administration.test.js
dist/test/http/access.test.js
"
rest=$(find dist/test -name '*.test.js' \
  -not -path '*/browser/*' \
  -not -path dist/test/import.test.js \
  -not -path dist/test/cli.test.js \
  -not -path dist/test/operations.test.js \
  -not -path dist/test/shutdown.test.js \
  -not -path dist/test/http/tus-process.test.js \
  -not -path dist/test/http/scale-out.test.js | sort)
files=""
for f in $first; do
  case "$rest" in *"$f"*) files="$files $f" ;; esac
done
for f in $rest; do
  case "$first" in *"$f"*) ;; *) files="$files $f" ;; esac
done
# shellcheck disable=SC2086 # one word a file
exec node --enable-source-maps --test --test-concurrency=2 $files
