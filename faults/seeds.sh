#!/bin/sh
# npm run faults:seeds -- [file] [first seed] [how many]: runs one fault suite (default: the
# withdrawals') once per seed, FIRST to FIRST+COUNT-1, on the embedded store and, with
# MONGODB_URI set, on MongoDB too; prints one line per seed and keeps each run's output in
# $FAULT_LOGS (default /tmp/fault-seeds). Exits non-zero if any seed failed.
set -u
cd "$(dirname "$0")/.."
file="${1:-crash-during-withdrawals}"
first="${2:-1}"
count="${3:-20}"
logs="${FAULT_LOGS:-/tmp/fault-seeds}"
mkdir -p "$logs"
failed=0
seed="$first"
while [ "$seed" -lt $((first + count)) ]; do
  log="$logs/$file-$seed.log"
  start=$(date +%s)
  if FAULT_SEED="$seed" node --enable-source-maps --test "dist/faults/$file.test.js" >"$log" 2>&1; then result=pass; else result=FAIL; failed=$((failed + 1)); fi
  summary=$(grep -E '^[0-9]+ operations|^[0-9]+ uploads in' "$log" | tr '\n' ' ' | cut -c1-240)
  echo "seed $seed: $result in $(($(date +%s) - start)) s: $summary"
  seed=$((seed + 1))
done
echo "$count seed(s), $failed failed (logs in $logs)"
[ "$failed" -eq 0 ]
