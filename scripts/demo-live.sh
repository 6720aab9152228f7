#!/usr/bin/env bash
# The live demo: two evitaDB releases, a small synthetic catalog, three loads per
# release interleaved (A B A B A B), then `warmstat compare` and a reference table.
# Servers come from `make evita` (EVITA_A / EVITA_B), or explicit classpaths
# (CLASSPATH_A / CLASSPATH_B) for a locally built server. Exit 3 = no servers available.
set -euo pipefail
cd "$(dirname "$0")/.."
A="${EVITA_A:-2026.2.2}"
B="${EVITA_B:-2026.2.3}"
bin=./bin/warmstat
demo="${DEMO_DIR:-${TMPDIR:-/tmp}/warmstat-demo-live}"
heap="${DEMO_HEAP:-2g}"

cp_a="${CLASSPATH_A:-}"
cp_b="${CLASSPATH_B:-}"
if [ -z "$cp_a" ] || [ -z "$cp_b" ]; then
  for v in "$A" "$B"; do
    EVITA_VERSION="$v" ./scripts/fetch-evita.sh >/dev/null 2>&1 || exit 3
  done
fi
server_args() { # version classpath
  if [ -n "$2" ]; then echo "--classpath $2"; else echo "--evita-version $1"; fi
}

rm -rf "$demo" && mkdir -p "$demo"
echo "== seeding a small production-shaped catalog (scale ${DEMO_SCALE:-0.002}) with evitaDB $B"
$bin seed --pristine "$demo/pristine" --catalog shop --scale "${DEMO_SCALE:-0.002}" --seed 1 --heap "$heap" $(server_args "$B" "$cp_b")
for i in 1 2 3; do
  for side in A B; do
    if [ "$side" = A ]; then v="$A"; cp="$cp_a"; else v="$B"; cp="$cp_b"; fi
    echo "== load $i of $v"
    $bin load --pristine "$demo/pristine" --catalog shop $(server_args "$v" "$cp") --server-heap "$heap" --reader-heap "$heap" \
      --out "$demo/runs/$v/run-$i" --work "$demo/work" --build "$v" --run-id "$v-$i" >"$demo/load-$v-$i.txt"
    tail -1 "$demo/load-$v-$i.txt"
  done
done
echo
$bin compare "$demo/runs/$A" "$demo/runs/$B" || true
echo
$bin table --group "$demo/runs/$A" "$demo/runs/$B"
