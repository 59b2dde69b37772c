#!/usr/bin/env bash
# usage: scripts/new-package.sh <dir> <name> <tags,comma> [deps json]
set -euo pipefail
dir=$1 name=$2 tags=$3 deps=${4:-"{}"}
mkdir -p "$dir/src"
tagjson=$(printf '%s' "$tags" | python3 -c 'import sys,json;print(json.dumps(sys.stdin.read().split(",")))')
cat > "$dir/package.json" <<JSON
{
  "name": "$name",
  "version": "0.1.0",
  "private": true,
  "type": "module",
  "exports": { ".": "./src/index.ts" },
  "scripts": {
    "lint": "eslint .",
    "typecheck": "tsc -p tsconfig.json"
  },
  "dependencies": $deps,
  "nx": { "tags": $tagjson }
}
JSON
rel=$(python3 -c "import os;print(os.path.relpath('.', '$dir'))")
cat > "$dir/tsconfig.json" <<JSON
{
  "extends": "$rel/tsconfig.base.json",
  "include": ["src/**/*.ts", "test/**/*.ts", "*.ts"]
}
JSON
