#!/usr/bin/env bash
# The Python the README's Python example is tested with (test/e2e/readme-examples.test.ts): a
# virtual environment in .venv-snippets/ holding the MCP SDK as `pip install mcp` gives it (2.x).
# Kept between runs, so the tests need no network once it is there; `--upgrade` brings it up to date.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-snippets
has_sdk() {
  "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("mcp").startswith("2.") else 1)' 2>/dev/null
}
if [ "${1:-}" != "--upgrade" ] && [ -x "$venv/bin/python" ] && has_sdk; then
  exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# A short wait per index: where one is out of reach (only a mirror answers), pip moves on at once
# instead of waiting out its default timeout on every lookup.
"$venv/bin/pip" install --quiet --timeout 10 --retries 1 --upgrade 'mcp>=2,<3'
has_sdk
