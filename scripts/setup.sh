#!/usr/bin/env bash
# Installs what building and testing lore needs on a fresh Debian machine with Rust:
# git (for the tests' real repositories) and cargo-nextest if missing. Idempotent.
set -euo pipefail
need_apt=()
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
  else
    echo "please install: ${need_apt[*]}" >&2
    exit 1
  fi
fi
