#!/usr/bin/env bash
# `acp-cli conform` against our agent -- the demo backend, the llm backend with no key (so
# no network), and the llm backend with model_server.py as its model -- the three
# official-SDK peer agents that tests/interop/setup.sh installs, and Agentao (the Python
# package `agentao`, pinned in agentao-requirements.txt and installed by agentao-setup.sh)
# driven by model_server.py, an OpenAI-compatible model on loopback. Prints each run's
# summary, then docs/conform.md's table: per capability and per tier, passed / failed /
# skipped for each agent, and each one's verdict.
# Fails when our agent fails a case (with the demo backend: when it is not conformant) or any
# agent cannot be run (conform exit 2); the peers' and Agentao's failures are findings,
# documented in docs/conform.md, not CI failures. Without a key the llm backend cannot run a
# turn, so the MANDATORY cases that need one are untested and its verdict is "not conformant"
# (exit 1): it must still fail nothing; so must the llm backend with a model.
# Usage: table.sh [--release] [COLUMN...]: COLUMNs (demo, llm-no-key, llm-model, python,
# typescript, rust, agentao) run only those agents, in the order given, and print only their
# columns; none runs them all. CONFORM_TIMEOUT_SCALE=X passes --timeout-scale X (a loaded
# machine: the Python SDK agent alone takes seconds to answer initialize there). CI uses the
# debug build `cargo test` already made (no second build of the workspace); --release
# measures the build users install. CONFORM_REPORTS=DIR keeps each run's `--json` report
# there, as COLUMN.json.
set -euo pipefail
profile=debug
if [ "${1:-}" = --release ]; then
    profile=release
    shift
fi
all=(demo llm-no-key llm-model python typescript rust agentao)
if [ "$#" -eq 0 ]; then set -- "${all[@]}"; fi
for name in "$@"; do
    case " ${all[*]} " in
    *" $name "*) ;;
    *)
        echo "table.sh: no column '$name' (columns: ${all[*]})" >&2
        exit 2
        ;;
    esac
done
columns=("$@")
wanted() { case " ${columns[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
if [ "$profile" = release ]; then
    cargo build --release --quiet -p acp-rs-cli
else
    cargo build --quiet -p acp-rs-cli
fi
bin="${CARGO_TARGET_DIR:-target}/$profile/acp-cli"
[ -x "$bin" ] || bin="$root/$bin"
out="$(mktemp -d)"
model_pid=
trap '[ -z "$model_pid" ] || kill "$model_pid" 2>/dev/null; rm -rf "$out"' EXIT
interop=tests/interop

status=0
run() {
    local name="$1" ours="$2"
    shift 2
    local start end rc=0
    start=$(date +%s%N)
    "$bin" conform --json ${CONFORM_TIMEOUT_SCALE:+--timeout-scale "$CONFORM_TIMEOUT_SCALE"} \
        -- "$@" >"$out/$name.json" || rc=$?
    end=$(date +%s%N)
    echo $(((end - start) / 1000000)) >"$out/$name.ms"
    if [ -n "${CONFORM_REPORTS:-}" ]; then
        mkdir -p "$CONFORM_REPORTS"
        cp "$out/$name.json" "$CONFORM_REPORTS/"
    fi
    printf '%-12s exit %d  %s\n' "$name" "$rc" "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["passed"], "passed,", d["failed"], "failed,", d["skipped"], "skipped;", "conformant" if d["verdict"]["conformant"] else "not conformant")' "$out/$name.json" 2>/dev/null || echo 'no report')"
    local failed
    failed=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["failed"])' "$out/$name.json" 2>/dev/null || echo 1)
    if [ "$rc" -eq 2 ] || { [ "$ours" = ours ] && [ "$rc" -ne 0 ]; } \
        || { [ "$ours" = ours-untested ] && [ "$failed" -ne 0 ]; }; then
        status=1
        python3 -c 'import json,sys; [print("  FAIL", c["id"], "—", c["detail"]) for c in json.load(open(sys.argv[1]))["cases"] if c["status"]=="fail"]' "$out/$name.json" 2>/dev/null || true
    fi
}

# model_server.py, the model of the llm-model and agentao columns: started once, on loopback,
# when one of them runs; MODEL_URL is its OpenAI-compatible base URL.
start_model() {
    [ -z "$model_pid" ] || return 0
    python3 tests/conform/model_server.py >"$out/model-port" &
    model_pid=$!
    for _ in $(seq 300); do
        [ -s "$out/model-port" ] && break
        sleep 0.1
    done
    if [ ! -s "$out/model-port" ]; then
        echo "table.sh: model_server.py printed no port in 30 s" >&2
        exit 2
    fi
    MODEL_URL="http://127.0.0.1:$(cat "$out/model-port")/v1"
}

if wanted demo; then
    run demo ours "$bin" --acp --stdio
fi
if wanted llm-no-key; then
    # A key, for a loopback port where nothing listens: without any key the llm backend
    # answers session/new auth-required (R-AUTH-8), which the suite does not do; with this
    # one every prompt fails at once and nothing leaves the machine.
    dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    run llm-no-key ours-untested env -i "PATH=$PATH" OPENAI_API_KEY=sk-unused \
        "OPENAI_BASE_URL=http://127.0.0.1:$dead/v1" "$bin" --acp --stdio --backend llm
fi
if wanted llm-model; then
    # The llm backend with a model that answers: its turns run, cancels included (the
    # suite's essay prompt streams for seconds). Still "ours-untested": it advertises
    # auth.logout, and the suite never logs an agent out (sessions/logout-gated).
    start_model
    mkdir "$out/llm-home"
    run llm-model ours-untested env -i "PATH=$PATH" "HOME=$out/llm-home" \
        OPENAI_API_KEY=sk-conform "OPENAI_BASE_URL=$MODEL_URL" OPENAI_MODEL=conform-model \
        "$bin" --acp --stdio --backend llm
fi
if wanted python; then
    run python peer "$interop/.venv/bin/python" "$interop/python/agent.py"
fi
if wanted typescript; then
    run typescript peer node "$interop/ts/agent.mjs"
fi
if wanted rust; then
    run rust peer "$interop/rust/target/debug/peer-agent"
fi
if wanted agentao; then
    bash tests/conform/agentao-setup.sh
    # Agentao reads its model from OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL (or a
    # login file under HOME, here an empty temporary one). Each of its 147 processes imports
    # its Python stack first (over a second when idle, several on a loaded machine), so its
    # timeouts are doubled unless CONFORM_TIMEOUT_SCALE says otherwise.
    start_model
    mkdir "$out/agentao-home"
    CONFORM_TIMEOUT_SCALE="${CONFORM_TIMEOUT_SCALE:-2}" run agentao peer \
        env -i "PATH=$PATH" "HOME=$out/agentao-home" PYTHONUTF8=1 \
        OPENAI_API_KEY=sk-conform "OPENAI_BASE_URL=$MODEL_URL" OPENAI_MODEL=conform-model \
        "$root/tests/conform/.venv-agentao/bin/python" -m agentao --acp --stdio
fi

python3 - "$out" "${columns[@]}" <<'PY'
import json, os, sys
out = sys.argv[1]
names = sys.argv[2:]
reports = {n: json.load(open(os.path.join(out, n + ".json"))) for n in names}
caps = []
for case in reports[names[0]]["cases"]:
    if case["capability"] not in caps:
        caps.append(case["capability"])
print()
print("| capability | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
def cell(report, cap):
    cases = [c for c in report["cases"] if cap is None or c["capability"] == cap]
    count = lambda s: sum(1 for c in cases if c["status"] == s)
    return f"{count('pass')} / {count('fail')} / {count('skip')}"
for cap in caps + [None]:
    label = cap if cap else "**all**"
    print(f"| {label} | " + " | ".join(cell(reports[n], cap) for n in names) + " |")
def tier_cell(report, tier):
    t = report["verdict"]["tiers"][tier]
    return f"{t['passed']} / {t['failed']} / {t['skipped']}"
for tier in ["MANDATORY", "CAPABILITY", "ADVISORY", "INFORMATIONAL"]:
    print(f"| {tier} | " + " | ".join(tier_cell(reports[n], tier) for n in names) + " |")
def verdict(report):
    v = report["verdict"]
    if v["conformant"]:
        return "**conformant**"
    why = []
    if v["failed"]:
        why.append(f"{len(v['failed'])} failed")
    if v["untested"]:
        why.append(f"{len(v['untested'])} untested")
    return "not conformant (" + ", ".join(why) + ")"
print("| verdict | " + " | ".join(verdict(reports[n]) for n in names) + " |")
ms = [int(open(os.path.join(out, n + ".ms")).read()) for n in names]
print("| seconds | " + " | ".join(f"{m / 1000:.1f}" for m in ms) + " |")
PY
exit "$status"
