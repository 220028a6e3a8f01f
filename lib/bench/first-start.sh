#!/bin/bash
# Times one start of `npm start` in a checkout: from the command until the three `export` lines,
# and until the dashboard is served; then stops it and waits until every process it started has
# ended. A first start removes the dashboard's build (.next) and the embedded database (.data)
# first; `--second` keeps the build. Appends one line to $FIRST_START_LOG (default ./first-start.times).
# Repeat it for figures: docs/operating/first-start.md.
#
#   lib/bench/first-start.sh [--second] CHECKOUT
set -u
keep_build=0
if [ "${1:-}" = "--second" ]; then keep_build=1; shift; fi
checkout=$(cd "$1" && pwd)
out=${FIRST_START_LOG:-$PWD/first-start.times}
cd "$checkout" || exit 2
if [ $keep_build = 1 ]; then rm -rf .data; else rm -rf .next .data; fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s.%N)
setsid env PORT="${PORT:-3900}" EMBEDDED_PG_PORT="${EMBEDDED_PG_PORT:-54900}" DESTINATION_PORT="${DESTINATION_PORT:-3901}" npm start >"$log" 2>&1 &
pid=$!
lines=""
while kill -0 $pid 2>/dev/null; do
  if [ -z "$lines" ] && grep -q "^export FENCELINE_API_KEY" "$log"; then lines=$(echo "$(date +%s.%N) - $start" | bc); fi
  if grep -q "the dashboard is ready at" "$log"; then break; fi
  sleep 0.2
done
ready=$(echo "$(date +%s.%N) - $start" | bc)
kill -TERM -- -$pid 2>/dev/null
wait $pid 2>/dev/null
# npm start stops its children (the embedded PostgreSQL too) on SIGTERM; the next run must not begin before they have.
while pgrep -g $pid >/dev/null; do sleep 0.2; done
if ! grep -q "the dashboard is ready at" "$log"; then echo "npm start ended before the dashboard was ready:" >&2; tail -20 "$log" >&2; exit 1; fi
echo "$([ $keep_build = 1 ] && echo second || echo first) start: lines ${lines} s, dashboard ${ready} s, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out"
