#!/usr/bin/env bash
# Fetch the evitaDB server (io.evitadb:evita_server, Java 17) and its runtime
# dependencies with Maven into a cache outside the repository:
#   $WARMSTAT_CACHE/evita/<version>/lib/*.jar, classpath.txt, source.txt
# Versions live side by side (a build comparison needs two). Re-running is a no-op.
#
#   EVITA_VERSION  the release (default 2026.2.3)
#   EVITA_REPO     extra Maven repositories, space- or comma-separated: URLs or local
#                  directories (a file-based repository such as one build-from-source
#                  filled); Maven Central is always used as well
#   MAVEN_REPO_LOCAL  Maven's local repository (default: Maven's own, ~/.m2/repository)
#
# evitaDB's own build deploys maven-shade's dependency-reduced pom for evita_server, which
# lists no runtime dependencies: resolving it alone gives a thin jar that cannot start. So
# when the server's pom lists no io.evitadb module, the modules it needs (those of the
# release's evita_server/pom.xml) are asked for explicitly, with versions managed by the
# release's own evita_root. The result is checked before it is declared fetched: the
# server's main class, the engine and the gRPC API must be on the classpath.
set -euo pipefail

version="${EVITA_VERSION:-2026.2.3}"
# group:artifact, overridable only to exercise this script with another artifact
coords="${EVITA_ARTIFACT:-io.evitadb:evita_server}"
group="${coords%%:*}"
artifact="${coords##*:}"
cache="${WARMSTAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warmstat}"
dest="$cache/evita/$version"
[ "$coords" = "io.evitadb:evita_server" ] || dest="$cache/other/$group.$artifact/$version"
# the io.evitadb modules evita_server depends on (evita_server/pom.xml of the 2026.2 releases;
# the GraphQL, Lab and observability APIs are optional for a gRPC benchmark)
modules="${EVITA_MODULES:-evita_engine evita_store_key_value evita_store_entity evita_store_server evita_export_fs evita_traffic_engine evita_external_api_core evita_external_api_grpc evita_external_api_system evita_external_api_rest}"

if [ -f "$dest/.complete" ]; then
  echo "evitaDB $version already fetched: $dest"
  exit 0
fi
command -v mvn >/dev/null || { echo "make evita: Maven (mvn) is not installed" >&2; exit 1; }

work="$(mktemp -d)"
partial="$dest.partial"
trap 'rm -rf "$work" "$partial"' EXIT

repos=""
for r in ${EVITA_REPO:+${EVITA_REPO//,/ }}; do
  case "$r" in
    http://* | https://* | file://*) url="$r" ;;
    *)
      [ -d "$r" ] || { echo "make evita: EVITA_REPO entry $r is neither a URL nor a directory" >&2; exit 1; }
      url="file://$(cd "$r" && pwd)"
      ;;
  esac
  n=$(( ${n:-0} + 1 ))
  repos="$repos<repository><id>extra-$n</id><url>$url</url><releases><enabled>true</enabled><updatePolicy>always</updatePolicy></releases><snapshots><enabled>false</enabled></snapshots></repository>"
done

# pom DEPS [MANAGED]: a throw-away project whose runtime dependencies are the server's
pom() {
  cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.warmstat</groupId>
  <artifactId>evita-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <repositories>$repos</repositories>
  <dependencyManagement><dependencies>$2</dependencies></dependencyManagement>
  <dependencies>$1</dependencies>
</project>
POM
}
dep() { echo "<dependency><groupId>$1</groupId><artifactId>$2</artifactId><version>$3</version></dependency>"; }

resolve() {
  rm -rf "$partial"
  mkdir -p "$partial/lib"
  mvn -B -q -U ${MAVEN_REPO_LOCAL:+-Dmaven.repo.local=$MAVEN_REPO_LOCAL} -f "$work/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$partial/lib" >"$work/mvn.log" 2>&1
}
fail_resolve() {
  if grep -q "$group" "$work/mvn.log"; then
    where="Maven Central (or the mirror your Maven settings name)"
    [ -n "${EVITA_REPO:-}" ] && where="$where or EVITA_REPO ($EVITA_REPO)"
    echo "make evita: $coords:$version could not be resolved from $where" >&2
  else
    echo "make evita: Maven failed:" >&2
  fi
  grep -E "ERROR" "$work/mvn.log" | head -5 >&2
  exit 1
}

pom "$(dep "$group" "$artifact" "$version")" ""
resolve || fail_resolve

if [ "$coords" = "io.evitadb:evita_server" ]; then
  # which pom did Maven resolve? the effective one lists its dependencies
  mvn -B -q ${MAVEN_REPO_LOCAL:+-Dmaven.repo.local=$MAVEN_REPO_LOCAL} -f "$work/pom.xml" dependency:list -DincludeScope=runtime -DoutputFile="$work/deps.txt" >>"$work/mvn.log" 2>&1 || fail_resolve
  if ! grep -q "io.evitadb:evita_engine:" "$work/deps.txt"; then
    echo "make evita: evita_server $version's pom lists no runtime dependencies (maven-shade's dependency-reduced pom); asking for its modules explicitly"
    deps="$(dep io.evitadb evita_server "$version")"
    for m in $modules; do deps="$deps$(dep io.evitadb "$m" "$version")"; done
    # evita_server's own third-party dependencies, versions as the release manages them
    for ga in ch.qos.logback:logback-classic org.slf4j:slf4j-api com.fasterxml.jackson.dataformat:jackson-dataformat-yaml \
              com.fasterxml.jackson.module:jackson-module-parameter-names org.yaml:snakeyaml org.apache.commons:commons-text; do
      deps="$deps<dependency><groupId>${ga%%:*}</groupId><artifactId>${ga##*:}</artifactId></dependency>"
    done
    pom "$deps" "<dependency><groupId>io.evitadb</groupId><artifactId>evita_root</artifactId><version>$version</version><type>pom</type><scope>import</scope></dependency>"
    resolve || fail_resolve
  fi
  # a runnable server, or a one-line reason
  has_class() { # class-file path -> the jar holding it, if any
    for j in "$partial"/lib/*.jar; do
      if unzip -Z1 "$j" "$1" >/dev/null 2>&1; then echo "$j"; return 0; fi
    done
    return 1
  }
  for need in "io/evitadb/server/EvitaServer.class:the server's main class" \
              "io/evitadb/core/Evita.class:the engine (evita_engine)" \
              "io/evitadb/externalApi/grpc/GrpcProviderRegistrar.class:the gRPC API (evita_external_api_grpc)"; do
    if ! has_class "${need%%:*}" >/dev/null; then
      echo "make evita: evitaDB $version resolved to $(ls "$partial/lib" | wc -l) jars without ${need#*:}; the server could not start from them (a thin evita_server jar without its modules?)" >&2
      exit 1
    fi
  done
fi

(cd "$partial/lib" && ls -1 ./*.jar | sed "s|^\./|$dest/lib/|" | paste -sd: -) >"$partial/classpath.txt"
{ echo "coordinates $coords:$version"; echo "repositories ${EVITA_REPO:-(Maven Central only)}"; } >"$partial/source.txt"
echo "$coords:$version main class io.evitadb.server.EvitaServer" >"$partial/.complete"
rm -rf "$dest"
mv "$partial" "$dest"
echo "evitaDB $version fetched: $dest ($(ls "$dest/lib" | wc -l) jars)"
