#!/usr/bin/env bash
# owned-dir.sh DIR: leave DIR empty except for warmstat's ownership marker, by the
# rule of the loader's work directory (evitaserver.PrepareDataDir): an absent
# directory is created, an empty one claimed, one carrying the marker wiped; anything
# else (a file, a symlink, a non-empty directory without the marker) is refused and
# left untouched. evitaserver's tests hold the two to the same outcomes.
set -euo pipefail
dir="${1:?usage: owned-dir.sh DIR}"
marker=.warmstat-owned
if [ -L "$dir" ] || { [ -e "$dir" ] && [ ! -d "$dir" ]; }; then
  echo "refusing to use $dir: it is not a directory" >&2
  exit 1
fi
if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
  if [ ! -e "$dir/$marker" ] && [ ! -L "$dir/$marker" ]; then
    echo "refusing to wipe $dir: it is not empty and has no $marker marker, so warmstat did not create it (choose an empty or new directory)" >&2
    exit 1
  fi
  find "$dir" -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +
fi
mkdir -p "$dir"
printf 'created by warmstat; wiped and reused by warmstat runs\n' >"$dir/$marker"
