#!/usr/bin/env bash
# Fetch the published evitaDB server (io.evitadb:evita_server, Java 17) and its
# runtime dependencies with Maven into a cache outside the repository:
#   $WARMSTAT_CACHE/evita/<version>/lib/*.jar and classpath.txt
# Versions live side by side (a build comparison needs two). Re-running is a no-op.
# The artifact on Maven Central is a thin jar, hence the dependency resolution.
set -euo pipefail

version="${EVITA_VERSION:-2026.2.17}"
# group:artifact, overridable only to exercise this script with an artifact the registry serves
coords="${EVITA_ARTIFACT:-io.evitadb:evita_server}"
group="${coords%%:*}"
artifact="${coords##*:}"
cache="${WARMSTAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warmstat}"
dest="$cache/evita/$version"
[ "$coords" = "io.evitadb:evita_server" ] || dest="$cache/other/$group.$artifact/$version"

if [ -f "$dest/.complete" ]; then
  echo "evitaDB $version already fetched: $dest"
  exit 0
fi
command -v mvn >/dev/null || { echo "make evita: Maven (mvn) is not installed" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.warmstat</groupId>
  <artifactId>evita-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>$group</groupId>
      <artifactId>$artifact</artifactId>
      <version>$version</version>
    </dependency>
  </dependencies>
</project>
POM

partial="$dest.partial"
rm -rf "$partial"
mkdir -p "$partial/lib"
if ! mvn -B -q -U -f "$work/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$partial/lib" >"$work/mvn.log" 2>&1; then
  rm -rf "$partial"
  if grep -q "$coords" "$work/mvn.log"; then
    echo "make evita: $coords:$version could not be resolved from the Maven registry this machine reaches" >&2
  else
    echo "make evita: Maven failed:" >&2
  fi
  grep -E "ERROR" "$work/mvn.log" | head -5 >&2
  exit 1
fi
(cd "$partial/lib" && ls -1 ./*.jar | sed "s|^\./|$dest/lib/|" | paste -sd: -) >"$partial/classpath.txt"
echo "$coords:$version main class io.evitadb.server.EvitaServer" >"$partial/.complete"
rm -rf "$dest"
mv "$partial" "$dest"
echo "evitaDB $version fetched: $dest ($(ls "$dest/lib" | wc -l) jars)"
