#!/usr/bin/env bash
# Installs what building and testing lore needs on a fresh Debian machine with Rust:
# git (for the tests' real repositories) and cargo-nextest if missing, and the headless browser
# and its WebDriver (Debian's chromium and chromium-driver) the web UI's end-to-end tests drive.
# Idempotent.
set -euo pipefail
need_apt=()
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
  else
    echo "please install: ${need_apt[*]}" >&2
    exit 1
  fi
fi
