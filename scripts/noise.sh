#!/usr/bin/env bash
# The noise experiment (make noise): A/A series, one build on both sides, under each
# setting, with the settings interleaved in one experiment (pair r of every setting
# runs before pair r+1 of any), ABBA within each setting, at each scale. For each
# setting it prints the between-run variation and the within-pair noise (one run's,
# once its pair partner is known) of the dominant collection's mean upsert, the load
# wall-clock and goLive, and the mean wall time of a run: what a setting buys in
# precision and what it costs in machine time. Run it on a quiet machine: nothing else,
# no build, no test, no helper beside it.
#
#   NOISE_DIR       where everything goes (absent, empty or warmstat's; default $TMPDIR/warmstat-noise)
#   NOISE_BUILD     the release on both sides (default 2026.2.3, fetched by make evita)
#   NOISE_SCALES    seeded catalog scales (default "0.02 0.05")
#   NOISE_PAIRS     pairs per setting (default 4)
#   NOISE_SETTINGS  any of: live replay embedded pretouch no-archive drop-caches warm warm2 ab duet duet-shared
#                   (default "live replay embedded pretouch no-archive warm")
#
# live: a reader server in the load window (the harness's way); replay: the writer
# alone replays a workload read once; embedded: the same replay in warmstat's embedded
# writer, no transport; pretouch: replay with -XX:+AlwaysPreTouch on the pinned heap;
# no-archive: replay with JVMs booted without the class-data archive; drop-caches:
# replay after dropping the page cache before every run (root only); warm / warm2: replay
# on a writer that loaded the workload once / twice into a throwaway catalog first
# (--writer-warm-up, a recorded condition: it measures a warm JVM). ab, duet and duet-shared are
# whole series (warmstat ab --pairs NOISE_PAIRS, one pair per round with --stop-after 1,
# embedded, one warm-up load): ab's pairs are sequential (A then B, ABBA), duet's are
# duets (both writers at once in lock-step, each pinned to half the CPUs, slots
# alternating; its within-pair noise is what is left once the slot is known);
# duet-shared's the same with both writers on every CPU (--duet-placement shared). Their
# last column is the 95 % half-width of the Product mean's change that one
# machine-hour of pairs buys (1.96 · √2 · within-pair noise / √(pairs per hour)).
# The load settings' CPU placement is the kernel's.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./bin/warmstat
dir="${NOISE_DIR:-${TMPDIR:-/tmp}/warmstat-noise}"
build="${NOISE_BUILD:-2026.2.3}"
scales="${NOISE_SCALES:-0.02 0.05}"
pairs="${NOISE_PAIRS:-4}"
settings="${NOISE_SETTINGS:-live replay embedded pretouch no-archive warm}"

for s in $settings; do
  case "$s" in
    live | replay | embedded | pretouch | no-archive | warm | warm2 | ab | duet | duet-shared) ;;
    drop-caches) [ -w /proc/sys/vm/drop_caches ] || { echo "noise.sh: drop-caches needs root (/proc/sys/vm/drop_caches)" >&2; exit 2; } ;;
    *) echo "noise.sh: unknown setting $s (live replay embedded pretouch no-archive drop-caches warm warm2 ab duet duet-shared)" >&2; exit 2 ;;
  esac
done
./scripts/owned-dir.sh "$dir"

# flags SETTING SCALE_DIR: the load flags of a setting
flags() {
  case "$1" in
    live) echo "--pristine $2/pristine --catalog shop" ;;
    replay | drop-caches) echo "--replay $2/shop.wsw" ;;
    embedded) echo "--replay $2/shop.wsw --target-mode embedded" ;;
    pretouch) echo "--replay $2/shop.wsw --writer-jvm-option=-XX:+AlwaysPreTouch" ;;
    no-archive) echo "--replay $2/shop.wsw --no-class-archive" ;;
    warm) echo "--replay $2/shop.wsw --writer-warm-up 1" ;;
    warm2) echo "--replay $2/shop.wsw --writer-warm-up 2" ;;
  esac
}

for scale in $scales; do
  sd="$dir/scale-$scale"
  mkdir -p "$sd"
  echo "== scale $scale: seeding and extracting once ($build)"
  $bin seed --pristine "$sd/pristine" --catalog shop --scale "$scale" --seed 1 --evita-version "$build"
  $bin extract --pristine "$sd/pristine" --catalog shop --evita-version "$build" --out "$sd/shop.wsw"
done

total=$((pairs * $(echo "$settings" | wc -w) * $(echo "$scales" | wc -w) * 2))
done_runs=0
begin=$(date +%s)
for r in $(seq 1 "$pairs"); do
  order="A B"
  [ $((r % 2)) -eq 0 ] && order="B A"
  for scale in $scales; do
    sd="$dir/scale-$scale"
    for s in $settings; do
      if [ "$s" = ab ] || [ "$s" = duet ] || [ "$s" = duet-shared ]; then # one pair of the setting's series per round
        duet=""
        [ "$s" = duet ] && duet=--duet
        [ "$s" = duet-shared ] && duet="--duet --duet-placement shared"
        t0=$(date +%s.%N)
        $bin ab --workload "$sd/shop.wsw" --a "$build" --b "$build" --pairs "$pairs" --stop-after 1 --target-mode embedded \
          --writer-warm-up 1 $duet --out "$sd/$s" >>"$sd/$s.log" 2>&1 || { echo "noise.sh: pair $r of $sd/$s failed; its output is in $sd/$s.log" >&2; exit 1; }
        # a pair's machine time, as two runs' seconds (a duet's two runs share one wall)
        awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f\n%.1f\n", (b - a) / 2, (b - a) / 2}' >>"$sd/$s/run-seconds"
        done_runs=$((done_runs + 2))
        elapsed=$(($(date +%s) - begin))
        echo "$(date +%T) $sd/$s pair $r done ($done_runs of $total runs; ETA $(((total - done_runs) * elapsed / done_runs)) s)"
        continue
      fi
      for side in $order; do
        [ "$s" = drop-caches ] && { sync; echo 3 >/proc/sys/vm/drop_caches; }
        out="$sd/$s/$side/run-$r"
        mkdir -p "$(dirname "$out")"
        t0=$(date +%s.%N)
        # shellcheck disable=SC2046
        $bin load $(flags "$s" "$sd") --evita-version "$build" --out "$out" --build "aa-$side" \
          --run-id "noise-$scale-$s-$side-$r" >"$out.log" 2>&1 || { echo "noise.sh: run $out failed; its output is in $out.log" >&2; exit 1; }
        awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f\n", b - a}' >>"$sd/$s/run-seconds"
        done_runs=$((done_runs + 1))
        elapsed=$(($(date +%s) - begin))
        echo "$(date +%T) $out done ($done_runs of $total runs; ETA $(((total - done_runs) * elapsed / done_runs)) s)"
      done
    done
  done
done

for scale in $scales; do
  sd="$dir/scale-$scale"
  echo
  echo "### A/A noise at scale $scale, $build, $pairs pairs per setting (between runs % | within pairs %)"
  echo
  echo "| setting | pairs | mean upsert: between | within | load wall: between | within | goLive: between | within | run wall s | ±95 % per machine-hour |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for s in $settings; do
    secs=$(awk '{s+=$1; n++} END {printf "%.0f", s/n}' "$sd/$s/run-seconds")
    $bin compare --method paired-t --format json --all "$sd/$s/A" "$sd/$s/B" | go run ./scripts/noisetable "$s" "$secs"
  done
done
