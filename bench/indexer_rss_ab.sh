#!/usr/bin/env bash
# Peak RSS and CPU seconds of a first index, two installs side by side, interleaved (ratios survive a noisy machine).
#   bash bench/indexer_rss_ab.sh OLD_VENV NEW_VENV CORPUS_DIR [ROUNDS]
# e.g. bash bench/indexer_rss_ab.sh ../old/.venv .venv bench/cache/semble/corpora/flask 2
set -euo pipefail
old=$1 new=$2 corpus=$3 rounds=${4:-2}
for round in $(seq "$rounds"); do
  for side in old new; do
    venv=$old; [ "$side" = new ] && venv=$new
    d=$(mktemp -d)
    LOCAL_VECTOR_SEARCH_DATA_ROOT=$d /usr/bin/time -f "$side round$round maxrss_kb=%M user=%U sys=%S wall=%e" \
      "$venv/bin/local-memory-indexer" index "$corpus" --json --quiet > "$d/out.json" 2> "$d/time.txt"
    tail -1 "$d/time.txt"
    python3 -c "import json,sys;d=json.load(open(sys.argv[1]))['data'];print('  chunks',d['chunks_embedded'],'embed_s',d['seconds']['embed'])" "$d/out.json"
    rm -rf "$d"
  done
done
