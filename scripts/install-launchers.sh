#!/bin/sh
# Installs jperfetto's launchers into a jlink runtime image.
#
#   scripts/install-launchers.sh IMAGE NAME=MODULE/MAINCLASS...
#   e.g. scripts/install-launchers.sh target/jperfetto \
#          jperfetto=org.jperfetto/org.jperfetto.cli.Jperfetto jtraced=org.jperfetto/org.jperfetto.cli.Jtraced
#
# Each launcher is core/src/main/jlink/launcher.sh.in with @NAME@ and @MAIN@ filled in, written to
# IMAGE/bin/NAME and made executable. Used by the Maven package phase and by PackagingIT.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 IMAGE NAME=MODULE/MAINCLASS..." >&2; exit 2; }
image=$1; shift
template="$(cd "$(dirname "$0")/.." && pwd)/core/src/main/jlink/launcher.sh.in"
[ -f "$image/bin/java" ] || { echo "install-launchers: $image is not a runtime image (no bin/java)" >&2; exit 1; }
[ -f "$template" ] || { echo "install-launchers: template missing: $template" >&2; exit 1; }
for spec in "$@"; do
  name=${spec%%=*}
  main=${spec#*=}
  case $main in
    */?*) ;;
    *) echo "install-launchers: bad launcher spec '$spec' (want NAME=MODULE/MAINCLASS)" >&2; exit 2 ;;
  esac
  case $name in
    "" | */* | *=*) echo "install-launchers: bad launcher name in '$spec'" >&2; exit 2 ;;
  esac
  sed -e "s|@NAME@|$name|g" -e "s|@MAIN@|$main|g" "$template" > "$image/bin/$name"
  chmod 755 "$image/bin/$name"
done
