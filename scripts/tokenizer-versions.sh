#!/usr/bin/env bash
# Times exact o200k token counting in each gpt-tokenizer version given (default: the pinned one
# and the newest of each later major), each installed in a scratch directory and run in fresh
# processes, interleaved, three rounds; prints one JSON line per run with the counts, which must
# be equal across versions. Used to decide whether an upgrade makes counting faster.
set -euo pipefail
versions=("${@:-2.9.0 3.4.0 4.0.0}")
read -r -a versions <<< "${versions[*]}"
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for v in "${versions[@]}"; do
  mkdir -p "$scratch/$v"
  (cd "$scratch/$v" && npm init -y >/dev/null && npm install "gpt-tokenizer@$v" --no-audit --no-fund --silent >/dev/null)
done
for round in 1 2 3; do
  for v in "${versions[@]}"; do
    node "$here/tokenizer-versions.mjs" "$scratch/$v" "$v"
  done
done
