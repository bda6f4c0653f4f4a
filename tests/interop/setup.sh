#!/usr/bin/env bash
# Installs the pinned test peers (LanceDB 0.31.0 = Lance 8.0.0, apache-arrow) from the npm registry.
set -euo pipefail
cd "$(dirname "$0")"
if [ -f node_modules/@lancedb/lancedb/package.json ] && \
   grep -q '"version": "0.31.0"' node_modules/@lancedb/lancedb/package.json; then
  exit 0
fi
npm ci --no-audit --no-fund
