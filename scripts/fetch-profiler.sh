#!/usr/bin/env bash
# Fetch async-profiler (tools.profiler:async-profiler, the native agent for this
# machine's architecture) and its converter (tools.profiler:jfr-converter) from Maven
# Central into a cache outside the repository:
#   $WARMSTAT_CACHE/async-profiler/<version>/linux-<arch>/libasyncProfiler.so
#   $WARMSTAT_CACHE/async-profiler/<version>/jfr-converter.jar
# Re-running is a no-op. warmstat load --writer-profile uses it (profile.Fetched).
#
#   PROFILER_VERSION  the release (default 4.2)
#   MAVEN_REPO_LOCAL  Maven's local repository (default: Maven's own, ~/.m2/repository)
set -euo pipefail

version="${PROFILER_VERSION:-4.2}"
cache="${WARMSTAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warmstat}"
dest="$cache/async-profiler/$version"
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64 | Linux/amd64) platform=linux-x64 ;;
  Linux/aarch64 | Linux/arm64) platform=linux-arm64 ;;
  *) echo "make profiler: async-profiler ships no agent for $(uname -s)/$(uname -m)" >&2; exit 1 ;;
esac

if [ -f "$dest/.complete" ] && [ -s "$dest/$platform/libasyncProfiler.so" ] && [ -s "$dest/jfr-converter.jar" ]; then
  echo "async-profiler $version already fetched: $dest"
  exit 0
fi
command -v mvn >/dev/null || { echo "make profiler: Maven (mvn) is not installed" >&2; exit 1; }
command -v unzip >/dev/null || { echo "make profiler: unzip is not installed" >&2; exit 1; }

work="$(mktemp -d)"
partial="$dest.partial"
trap 'rm -rf "$work" "$partial"' EXIT
rm -rf "$partial"
mkdir -p "$partial"

get() { # group:artifact:version[:packaging:classifier] -> $work
  mvn -B -q ${MAVEN_REPO_LOCAL:+-Dmaven.repo.local=$MAVEN_REPO_LOCAL} dependency:copy \
    -Dartifact="$1" -DoutputDirectory="$work" -Dmdep.stripVersion=false >>"$work/mvn.log" 2>&1 || {
    echo "make profiler: $1 could not be resolved from Maven Central:" >&2
    grep -E "ERROR" "$work/mvn.log" | head -3 >&2
    exit 1
  }
}
get "tools.profiler:async-profiler:$version:jar:$platform"
get "tools.profiler:jfr-converter:$version"

unzip -q -o "$work/async-profiler-$version-$platform.jar" "$platform/libasyncProfiler.so" -d "$partial"
cp "$work/jfr-converter-$version.jar" "$partial/jfr-converter.jar"
[ -s "$partial/$platform/libasyncProfiler.so" ] || { echo "make profiler: the async-profiler jar holds no $platform/libasyncProfiler.so" >&2; exit 1; }
unzip -p "$partial/jfr-converter.jar" META-INF/MANIFEST.MF | grep -q "^Main-Class:" ||
  { echo "make profiler: jfr-converter $version is not a runnable jar" >&2; exit 1; }
echo "tools.profiler:async-profiler:$version:$platform tools.profiler:jfr-converter:$version" >"$partial/.complete"
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$partial" "$dest"
echo "async-profiler $version fetched: $dest"
