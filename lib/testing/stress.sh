#!/usr/bin/env bash
# The test kit under load: runs the quickstart's own tests (examples/quickstart, `npm test`, against
# the packed package installed in a project of its own) and the kit's own tests
# (lib/testing/*.scenario.test.ts) ROUNDS times in a row, beside a CPU hog on every core, and
# counts the rounds that failed. Every wait the kit offers waits on the event it names; a kit that
# races shows up here as a failed round, with its log kept.
#
#   lib/testing/stress.sh                 # 50 rounds, one busy loop per core
#   ROUNDS=20 lib/testing/stress.sh       # fewer rounds
#   HOG=stress-ng lib/testing/stress.sh   # `stress-ng --cpu <cores>` instead of busy loops
#
# Prints one line per round (seconds, load average, each suite's exit code) and a summary; the logs
# of failed rounds stay in $LOGS (default: a new directory under /tmp). Needs the npm registry once,
# to install the quickstart's dependencies. Stops its hogs and removes the project when it ends.
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ROUNDS="${ROUNDS:-50}"
CORES="${CORES:-$(nproc)}"
HOG="${HOG:-busy}"
LOGS="${LOGS:-$(mktemp -d /tmp/fenceline-kit-stress.XXXXXX)}"

cd "$ROOT"
FENCELINE_PACKAGE_DASHBOARD=0 npm run package >"$LOGS/package.log" 2>&1 || { echo "npm run package failed: $LOGS/package.log"; exit 2; }
TARBALL="$(ls "$ROOT"/dist/fenceline-*.tgz | head -1)"

PROJECT="$(mktemp -d /tmp/fenceline-quickstart.XXXXXX)"
# As root, the embedded PostgreSQL runs as `postgres`, which must reach the project's node_modules.
chmod 755 "$PROJECT"
cp -r examples/quickstart/. "$PROJECT"/
sed -i "s|\"file:../../dist/fenceline-0.1.0.tgz\"|\"file:$TARBALL\"|" "$PROJECT/package.json"
(cd "$PROJECT" && npm install --no-audit --no-fund >"$LOGS/install.log" 2>&1) || { echo "npm install failed: $LOGS/install.log"; exit 2; }

HOGS=()
stop() {
  for pid in "${HOGS[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$PROJECT"
}
trap stop EXIT
trap 'exit 130' INT TERM
if [ "$HOG" = "stress-ng" ]; then
  stress-ng --cpu "$CORES" --quiet & HOGS+=($!)
else
  for _ in $(seq "$CORES"); do (while :; do :; done) & HOGS+=($!); done
fi

failed=0
started=$(date +%s)
for round in $(seq "$ROUNDS"); do
  t0=$(date +%s)
  (cd "$PROJECT" && npm test) >"$LOGS/round-$round-quickstart.log" 2>&1; quickstart=$?
  npx vitest run lib/testing/ >"$LOGS/round-$round-kit.log" 2>&1; kit=$?
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  if [ "$quickstart" -ne 0 ] || [ "$kit" -ne 0 ]; then
    failed=$((failed + 1))
  else
    rm -f "$LOGS/round-$round-quickstart.log" "$LOGS/round-$round-kit.log"
  fi
  echo "round $round/$ROUNDS: $(( $(date +%s) - t0 )) s, load $load, quickstart exit $quickstart, kit exit $kit"
done
echo "$ROUNDS rounds in $(( $(date +%s) - started )) s beside $CORES $HOG hog(s): $failed failed; logs in $LOGS"
[ "$failed" -eq 0 ]
