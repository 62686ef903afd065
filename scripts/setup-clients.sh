#!/usr/bin/env bash
# Installs the real other sides the tests drive lore against, into .tools/ (git-ignored):
# - in a venv: the official MCP Python SDK `mcp`; contexa (a GCC `.GCC/` implementation) and
#   git-notes-memory (memories in `refs/notes/mem/*`), the tools whose files lore imports and
#   exports. git-notes-memory is installed without its embedding stack (sentence-transformers
#   pulls in torch): its notes, parser, capture, SQLite index and reindex need only PyYAML,
#   python-dotenv and sqlite-vec, pinned here; it indexes without vectors when no model loads.
#   sqlite-vec is a loadable extension; pysqlite3-binary stands in for a Python whose sqlite3
#   was built without extension loading (the tests' scripts use it only then).
# - from npm: the MCP Inspector CLI with the Node 22 it needs (npm package node@22).
# Idempotent; prints nothing but errors when already installed. pip runs as `python -m pip`, so
# a venv copied from another checkout installs into itself.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=.tools
mkdir -p "$tools"
py="$tools/venv/bin/python"
pip_install() { "$py" -m pip install --quiet --disable-pip-version-check "$@"; }
if [ ! -x "$py" ]; then
  python3 -m venv "$tools/venv"
fi
if ! "$py" -c 'import mcp' 2>/dev/null; then
  pip_install 'mcp==2.3.0'
fi
if ! "$py" - <<'PY' 2>/dev/null; then
from importlib.metadata import version
assert version("contexa") == "1.1.2"
assert version("git-notes-memory") == "0.12.0"
assert version("sqlite-vec") == "0.1.9"
assert version("python-dotenv") == "1.2.4"
assert version("pysqlite3-binary") == "0.5.4.post2"
import yaml, contexa, git_notes_memory.sync, git_notes_memory.capture, git_notes_memory.recall
PY
  pip_install 'contexa==1.1.2' 'PyYAML==6.0.4' 'python-dotenv==1.2.4' 'sqlite-vec==0.1.9' \
    'pysqlite3-binary==0.5.4.post2'
  pip_install --no-deps 'git-notes-memory==0.12.0'
fi
if [ ! -x "$tools/npm/node_modules/.bin/mcp-inspector" ] || [ ! -x "$tools/npm/node_modules/node/bin/node" ]; then
  mkdir -p "$tools/npm"
  (cd "$tools/npm" && [ -f package.json ] || echo '{"name":"lore-test-clients","private":true}' >package.json)
  (cd "$tools/npm" && npm install --silent --no-audit --no-fund 'node@22' '@modelcontextprotocol/inspector@2.12.0')
fi
