#!/usr/bin/env bash
# The live demo: two evitaDB builds, a small synthetic catalog, three loads per build
# interleaved (A B B A A B), then `warmstat compare` and a reference table.
#
# Each side's server (A, then B), first one set wins:
#   EVITA_HOME_A / EVITA_HOME_B   an evitaDB checkout with its server jar built
#   SERVER_JAR_A / SERVER_JAR_B   a runnable evita-server.jar
#   CLASSPATH_A  / CLASSPATH_B    an explicit classpath
#   EVITA_A      / EVITA_B        a release fetched with make evita (default 2026.2.2 / 2026.2.3;
#                                 EVITA_REPO names the Maven repository holding it)
# Exit 3: no servers available (make demo then runs the bundled-data demo).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/warmstat
demo="${DEMO_DIR:-${TMPDIR:-/tmp}/warmstat-demo-live}"
heap="${DEMO_HEAP:-1g}"

# server_args SIDE: the warmstat flags naming that side's server
server_args() {
  local side=$1 v home jar cp
  eval "home=\${EVITA_HOME_$side:-} jar=\${SERVER_JAR_$side:-} cp=\${CLASSPATH_$side:-} v=\${EVITA_$side:-}"
  if [ -n "$home" ]; then echo "--evita-home $home"
  elif [ -n "$jar" ]; then echo "--server-jar $jar"
  elif [ -n "$cp" ]; then echo "--classpath $cp"
  else
    [ -n "$v" ] || { [ "$side" = A ] && v=2026.2.2 || v=2026.2.3; }
    EVITA_VERSION="$v" ./scripts/fetch-evita.sh >/dev/null 2>&1 || return 3
    echo "--evita-version $v"
  fi
}
label() { # SIDE: a short label for the build
  local a; a=$(server_args "$1"); a=${a#--* }; basename "$a" | cut -c1-40
}
args_a=$(server_args A) || exit 3
args_b=$(server_args B) || exit 3
A=$(label A); B=$(label B)
[ "$A" != "$B" ] || { A="A-$A"; B="B-$B"; }

# the demo directory is claimed by the loader's ownership rule: absent, empty, or
# carrying .warmstat-owned; anything else is refused, never wiped
./scripts/owned-dir.sh "$demo"

echo "== seeding a small production-shaped catalog (scale ${DEMO_SCALE:-0.002}) with $B"
# shellcheck disable=SC2086
$bin seed --pristine "$demo/pristine" --catalog shop --scale "${DEMO_SCALE:-0.002}" --seed 1 --heap "$heap" $args_b
n=0
for side in A B B A A B; do
  if [ "$side" = A ]; then name="$A"; args="$args_a"; else name="$B"; args="$args_b"; fi
  n=$((n + 1))
  echo "== load $n: $name"
  # shellcheck disable=SC2086
  $bin load --pristine "$demo/pristine" --catalog shop $args --server-heap "$heap" --reader-heap "$heap" \
    --out "$demo/runs/$name/run-$n" --work "$demo/work" --build "$name" --run-id "$name-$n" >"$demo/load-$n.txt"
  tail -1 "$demo/load-$n.txt"
done
echo
$bin compare "$demo/runs/$A" "$demo/runs/$B" || true
echo
$bin table --group "$demo/runs/$A" "$demo/runs/$B"
