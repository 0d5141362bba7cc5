#!/usr/bin/env bash
# Installs Agentao, the Python package `agentao` (its version and every dependency pinned in
# agentao-requirements.txt), into tests/conform/.venv-agentao, for table.sh's Agentao row:
# `.venv-agentao/bin/python -m agentao --acp --stdio` is its ACP agent on stdio.
# Needs python3 (>= 3.10, with venv) and the Python package registry. Safe to run again: it
# reinstalls only when the requirements file is newer than the venv's stamp.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv-agentao"
stamp="$venv/.installed"
if [ -f "$stamp" ] && [ ! "$here/agentao-requirements.txt" -nt "$stamp" ]; then
    exit 0
fi
echo "== Agentao -> $venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --requirement "$here/agentao-requirements.txt"
touch "$stamp"
