#!/usr/bin/env bash
# Installs the pinned test peers (LanceDB 0.31.0 = Lance 8.0.0, apache-arrow, and s3rver 3.7.1
# for the S3 tests) from the npm registry, exactly as locked in package-lock.json.
set -euo pipefail
cd "$(dirname "$0")"
# Azurite 3.35.0 (Azure Storage emulator, for the az:// tests): its own package in azurite/.
(cd azurite && { grep -qs '"version": "3.35.0"' node_modules/azurite/package.json || npm ci --no-audit --no-fund; })
has() { [ -f "node_modules/$1/package.json" ] && grep -q "\"version\": \"$2\"" "node_modules/$1/package.json"; }
if has @lancedb/lancedb 0.31.0 && has apache-arrow 18.1.0 && has s3rver 3.7.1; then
  exit 0
fi
npm ci --no-audit --no-fund
# Azurite (Azure Storage emulator, for the az:// tests): its own package in azurite/, pinned there.
(cd azurite && { [ -f node_modules/azurite/package.json ] && grep -q '"version": "3.35.0"' node_modules/azurite/package.json || npm ci --no-audit --no-fund; })
