#!/usr/bin/env bash
# The Python the README's Python example is tested with (test/e2e/readme-examples.test.ts): a
# virtual environment in .venv-snippets/ holding the MCP SDK as `pip install mcp` gives it (2.x).
# Kept between runs (the test needs no network); run again to bring the SDK up to date.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv-snippets/bin/python ]; then
  python3 -m venv .venv-snippets
fi
.venv-snippets/bin/pip install --quiet --upgrade 'mcp>=2,<3'
