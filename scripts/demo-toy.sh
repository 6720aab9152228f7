#!/usr/bin/env bash
# The toy demo (make demo-toy): two evitaDB builds, a tiny synthetic catalog, and
# `warmstat ab`: an interleaved ABBA series (at most DEMO_RUNS=3 runs per side) that stops
# once its answer is known, with per-run health, the looks, the comparison, a table and a
# plot — every command's output in about two minutes, too small a catalog for a verdict
# (make demo asks the real question).
#
# Each side's server (A, then B), first one set wins:
#   EVITA_HOME_A / EVITA_HOME_B   an evitaDB checkout with its server jar built
#   SERVER_JAR_A / SERVER_JAR_B   a runnable evita-server.jar
#   CLASSPATH_A  / CLASSPATH_B    an explicit classpath
#   EVITA_A      / EVITA_B        a release fetched with make evita (default 2026.2.2 / 2026.2.3;
#                                 EVITA_REPO names the Maven repository holding it)
# Exit 69 (sysexits' EX_UNAVAILABLE): no servers available (make demo then runs the
# bundled-data demo); any other failure, a refusal's exit 3 included, is the demo's failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/warmstat
demo="${DEMO_DIR:-${TMPDIR:-/tmp}/warmstat-demo-toy}"
heap="${DEMO_HEAP:-1g}"

# spec SIDE: that side's server as `warmstat ab` names it
spec() {
  local side=$1 v home jar cp
  eval "home=\${EVITA_HOME_$side:-} jar=\${SERVER_JAR_$side:-} cp=\${CLASSPATH_$side:-} v=\${EVITA_$side:-}"
  if [ -n "$home" ]; then echo "checkout:$home"
  elif [ -n "$jar" ]; then echo "jar:$jar"
  elif [ -n "$cp" ]; then echo "classpath:$cp"
  else
    [ -n "$v" ] || { [ "$side" = A ] && v=2026.2.2 || v=2026.2.3; }
    EVITA_VERSION="$v" ./scripts/fetch-evita.sh >/dev/null 2>&1 || return 69
    echo "$v"
  fi
}
a=$(spec A) || exit 69
b=$(spec B) || exit 69

# the demo directory is claimed by the loader's ownership rule: absent, empty, or
# carrying .warmstat-owned; anything else is refused, never wiped
./scripts/owned-dir.sh "$demo"

echo "== seeding a small production-shaped catalog (scale ${DEMO_SCALE:-0.002}) with $b"
seed_flag() { # a series' server spec as seed's flag
  case "$1" in
    checkout:*) echo "--evita-home ${1#checkout:}" ;;
    jar:*) echo "--server-jar ${1#jar:}" ;;
    classpath:*) echo "--classpath ${1#classpath:}" ;;
    *) echo "--evita-version $1" ;;
  esac
}
# shellcheck disable=SC2046
$bin seed --pristine "$demo/pristine" --catalog shop --scale "${DEMO_SCALE:-0.002}" --seed 1 --heap "$heap" $(seed_flag "$b")
# the faithful method (every source: the snapshot read once, replayed by the embedded
# writer), and each run's writer warmed by one load before the measured one
ab_flags="${DEMO_AB_FLAGS---writer-warm-up 1}"
echo "== warmstat ab: A=$a B=$b, interleaved ABBA, at most ${DEMO_RUNS:-3} runs per side, stops once the answer is known ($ab_flags)"
# shellcheck disable=SC2086
$bin ab --pristine "$demo/pristine" --catalog shop --a "$a" --b "$b" --out "$demo/series" \
  --max-runs "${DEMO_RUNS:-3}" --server-heap "$heap" --reader-heap "$heap" $ab_flags
echo
echo "Three pairs rule out only changes larger than the noise the answer above states; an A/A series (the same release as --a and --b)" \
  "tells how much of that noise is the machine's and how much the two builds' (docs/measuring.md)."
if [ "$a" = 2026.2.2 ] && [ "$b" = 2026.2.3 ] && [ "${DEMO_SCALE:-0.002}" = 0.002 ]; then
  # issue 33's question, answered where it can be (docs/measuring.md, How faithful is the workload)
  echo "Why this does not settle 2026.2.2 against 2026.2.3 (production's Product upserts 14.1 % faster): the release's gain" \
    "is in the checks of entangled entities' reference containers, and at scale 0.002 a Product meets 669 back-references" \
    "there, against production's 10,000-16,000 (warmstat shape): the gain is a few percent here, inside three pairs' noise." \
    "Measured on a 2-core machine: at scale 0.2 (20,867 per Product) ab resolves 2026.2.3 faster by -11.8 % [-16.4 %, -6.9 %]" \
    "in 4 pairs of 6-minute runs; at 0.02 by -4.9 % [-8.9 %, -0.6 %] in 6 pairs of about a minute; neither fits a demo of a few minutes."
fi
echo "Next, on your own build (the command is bin/warmstat): seed a larger catalog once (warmstat seed --pristine ~/ws/pristine --catalog shop --scale 0.1 $(seed_flag "$b")), then" \
  "run warmstat ab --pristine ~/ws/pristine --catalog shop --a $b --b checkout:~/src/evitaDB --out series/my-branch (docs/ab.md)."
