#!/usr/bin/env bash
# The live demo (make demo): the real question, asked as a user asks it — is evitaDB
# 2026.2.3 faster or slower than 2026.2.2 at publishing a catalog? — with the one command
# `warmstat ab --a 2026.2.2 --b 2026.2.3`: no source given, so warmstat generates its
# default catalog once into its cache at the scale the measurements chose, replays it
# with the embedded writer in interleaved pairs, sets the machine's speed aside, and
# stops when the answer is known (progress and an ETA as it goes).
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
demo="${DEMO_DIR:-${TMPDIR:-/tmp}/warmstat-demo-live}"

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

echo "== warmstat ab --a $a --b $b: is B faster or slower than A at publishing a catalog?"
# shellcheck disable=SC2086
$bin ab --a "$a" --b "$b" --out "$demo/series" ${DEMO_AB_FLAGS:-}
echo
echo "The same command again prints this answer (the series is kept in $demo/series; report, compare, table and plot read it)."
echo "Next, on your own build: warmstat ab --a $b --b checkout:~/src/evitaDB (docs/ab.md); make demo-toy shows every command's output in two minutes."
