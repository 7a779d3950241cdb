#!/usr/bin/env bash
# The main job on the embedded default: index a real repository offline with the local ONNX
# model, then ask it a few questions the way an agent would.
set -euo pipefail
project="${1:-$(pwd)}"
bin="$(dirname "$0")/../.venv/bin"
echo "== indexing $project into ${LOCAL_VECTOR_SEARCH_DATA_ROOT:-~/.agent-forge/local-memory-search}"
"$bin/local-memory-indexer" index "$project"
echo
echo "== re-index (incremental: nothing changed)"
"$bin/local-memory-indexer" index "$project" --json | "$bin/python" -c \
  'import json, sys; d = json.load(sys.stdin)["data"]; print("parsed %(files_parsed)d, unchanged %(files_unchanged)d, embedded %(chunks_embedded)d chunks" % d)'
ask() {
  echo
  echo "== $1: \"$2\""
  "$bin/local-memory-search" query "$2" --project "$project" --mode "$1" --limit 3
}
ask hybrid "where are chunk embeddings computed and batched by length"
ask keyword "index_project"
ask semantic "how does the searcher stay read-only"
ask hybrid "skip secret files like .env and private keys"
