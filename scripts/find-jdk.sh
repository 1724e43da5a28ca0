# POSIX sh. Sourced (not executed) by mvnw, .ci/run and the launchers: exports JAVA_HOME pointing at a JDK
# whose feature version is 22 or newer, or prints what to install and fails.
#
# Order: $JAVA_HOME when it is new enough; else the newest JDK under /usr/lib/jvm (or
# $JPERFETTO_JVM_DIR); else the java on PATH when it is new enough.

jperfetto_jdk_version() {
  # Prints the feature version (17, 22, 25, ...) of the JDK at $1, or nothing.
  local home=$1 line v
  [ -x "$home/bin/java" ] && [ -x "$home/bin/javac" ] || return 0
  if [ -r "$home/release" ]; then
    line=$(grep -m1 '^JAVA_VERSION=' "$home/release" 2>/dev/null)
    v=$(printf '%s' "${line#JAVA_VERSION=}" | tr -d '"')
  fi
  if [ -z "${v:-}" ]; then
    v=$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -1)
  fi
  v=${v#1.}
  echo "${v%%[.+-]*}"
}

jperfetto_find_jdk() {
  local min=22 best="" best_v=0 cand v
  # Callers may run with globbing off (mvnw uses set -f); the JDK search needs it.
  case $- in *f*) set +f; jperfetto_glob_was_off=1 ;; *) jperfetto_glob_was_off=0 ;; esac
  if [ -n "${JAVA_HOME:-}" ]; then
    v=$(jperfetto_jdk_version "$JAVA_HOME")
    if [ -n "$v" ] && [ "$v" -ge "$min" ]; then return 0; fi
    echo "jperfetto: JAVA_HOME=$JAVA_HOME is JDK ${v:-?}, older than $min; looking for a newer JDK" >&2
  fi
  for cand in "${JPERFETTO_JVM_DIR:-/usr/lib/jvm}"/*; do
    [ -d "$cand" ] || continue
    v=$(jperfetto_jdk_version "$cand")
    if [ -n "$v" ] && [ "$v" -ge "$min" ] && [ "$v" -gt "$best_v" ]; then best=$cand; best_v=$v; fi
  done
  [ "$jperfetto_glob_was_off" = 1 ] && set -f
  if [ -z "$best" ] && command -v javac >/dev/null 2>&1; then
    cand=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
    v=$(jperfetto_jdk_version "$cand")
    if [ -n "$v" ] && [ "$v" -ge "$min" ]; then best=$cand; best_v=$v; fi
  fi
  if [ -z "$best" ]; then
    cat >&2 <<MSG
jperfetto needs a JDK $min or newer (the Foreign Function & Memory API is final in JDK 22).
None was found: JAVA_HOME is unset or too old, and ${JPERFETTO_JVM_DIR:-/usr/lib/jvm} holds no JDK >= $min.
Install one, for example on Debian/Ubuntu: apt-get install openjdk-25-jdk-headless
(or Temurin 25 from adoptium.net), then set JAVA_HOME to it or rerun.
MSG
    return 1
  fi
  export JAVA_HOME=$best
}

jperfetto_find_jdk || exit 1
export PATH="$JAVA_HOME/bin:$PATH"
JPERFETTO_JAVA_VERSION=$(jperfetto_jdk_version "$JAVA_HOME")
export JPERFETTO_JAVA_VERSION
# JDK 23+ warns when a library (protobuf-java, Maven's Guice) uses sun.misc.Unsafe; JDK 22 does not
# know the option at all, so it is added only where it exists.
JPERFETTO_UNSAFE_FLAG=""
if [ "$JPERFETTO_JAVA_VERSION" -ge 23 ]; then JPERFETTO_UNSAFE_FLAG="--sun-misc-unsafe-memory-access=allow"; fi
export JPERFETTO_UNSAFE_FLAG
