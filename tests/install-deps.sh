#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need (run as root on Debian 12).
# Skipped when not root or when LV_SKIP_APT=1.
set -euo pipefail
if [ "$(id -u)" != 0 ] || [ "${LV_SKIP_APT:-0}" = 1 ]; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
pkgs=(cmake ninja-build pkg-config gcc clang-14 libclang-rt-14-dev libcmocka-dev
      libjansson-dev libcurl4-openssl-dev libexpat1-dev libssl-dev protobuf-compiler
      valgrind strace ca-certificates python3)
# Node may already be installed (e.g. from NodeSource, whose nodejs bundles npm and
# conflicts with Debian's npm package): only install Debian's if one is missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  pkgs+=(nodejs npm)
fi
apt-get update
apt-get install -y --no-install-recommends "${pkgs[@]}" </dev/null
