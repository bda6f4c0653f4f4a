#!/usr/bin/env bash
# Installs the Debian 12 packages lancever needs, from the one list tests/debian-packages.txt.
#
#   bash tests/install-deps.sh [--build | --test | --bench] [--print]
#
#   --build   what building lancever needs (demo/run.sh)
#   --test    also what the tests need (the default; tests/run-all.sh and CI)
#   --bench   also what the benchmarks need (bench/run.sh)
#   --print   print the group's packages, one a line, and install nothing
#
# Whatever is already present: only the packages dpkg does not report installed are
# installed (no apt-get at all when none is missing).  As root it runs apt-get; as another
# user it names the missing packages and the command, and fails.  LV_SKIP_APT=1 skips the
# installation (it still says what is missing).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
list=$here/debian-packages.txt
group=test
print=0
for a in "$@"; do
  case $a in
    --build) group=build ;;
    --test) group=test ;;
    --bench) group=bench ;;
    --print) print=1 ;;
    *) echo "usage: bash tests/install-deps.sh [--build | --test | --bench] [--print]" >&2; exit 2 ;;
  esac
done

# The group's rows (build rows belong to every group): "package provides when".
rows() { awk -v g="$group" '!/^#/ && NF >= 4 && ($1 == "build" || $1 == g) { print $2, $3, $4 }' "$list"; }

if [ "$print" = 1 ]; then
  rows | awk '{ print $1 }' | awk '!seen[$0]++'
  exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: dpkg-query not found: this installs Debian packages (Debian 12)" >&2
  exit 1
fi
missing=()
while read -r pkg provides when; do
  # "absent": only when the program is missing (a NodeSource nodejs already brings npm)
  if [ "$when" = absent ] && command -v "${provides#bin:}" >/dev/null 2>&1; then
    continue
  fi
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done < <(rows | awk '!seen[$1]++')

if [ ${#missing[@]} = 0 ]; then
  echo "install-deps: every package for --$group is installed"
  exit 0
fi
echo "install-deps: missing for --$group: ${missing[*]}"
if [ "${LV_SKIP_APT:-0}" = 1 ]; then
  echo "install-deps: LV_SKIP_APT=1: not installing them"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: run as root: apt-get install --no-install-recommends ${missing[*]}" >&2
  echo "              (or: sudo bash tests/install-deps.sh --$group)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}" </dev/null
