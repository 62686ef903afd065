#!/usr/bin/env bash
# Installs the real MCP clients the tests drive lore's server with, into .tools/ (git-ignored):
# the official Python SDK `mcp` (PyPI, in a venv) and the MCP Inspector CLI (npm) with the Node 22
# it needs (npm package node@22). Idempotent; prints nothing but errors when already installed.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=.tools
mkdir -p "$tools"
if [ ! -x "$tools/venv/bin/python" ] || ! "$tools/venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install --quiet --disable-pip-version-check 'mcp==2.3.0'
fi
if [ ! -x "$tools/npm/node_modules/.bin/mcp-inspector" ] || [ ! -x "$tools/npm/node_modules/node/bin/node" ]; then
  mkdir -p "$tools/npm"
  (cd "$tools/npm" && [ -f package.json ] || echo '{"name":"lore-test-clients","private":true}' >package.json)
  (cd "$tools/npm" && npm install --silent --no-audit --no-fund 'node@22' '@modelcontextprotocol/inspector@2.12.0')
fi
