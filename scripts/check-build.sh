#!/usr/bin/env bash
# The built app (out/, made by `npm run build`, which the e2e run also does) must contain no test hook: no test
# kit from src/main/testing and no environment switch meant for tests. CI runs this after the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d out/main ] || npm run -s build
if hits=$(grep -rlE 'ARLARENA_TEST|ARL_KIT_|armKillPoint|syntheticJob|src/main/testing' out/); then
  echo "check-build: the built app contains test hooks:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "check-build: out/ holds no test hook ($(find out -type f | wc -l) files checked)"
