#!/usr/bin/env bash
# Runs GradBench's own evals against mochi-gradbench, and against GradBench's `manual`
# tool (hand-written C++ derivatives) side by side, then prints one table:
# eval, size, per tool the median primal and derivative times, their ratio, and
# whether the eval accepted both outputs.
#
#   benches/gradbench/run.sh [options] GRADBENCH_CHECKOUT
#
# options:
#   --evals a,b,…   evals to run (default: every eval,
#                   hello,lse,llsq,det,ode,gmm,kmeans,lstm,ba,ht,particle,saddle)
#   --quick         small sizes and --min-seconds 0.2 (about a minute here)
#   --no-manual     run mochi only
#   --json FILE     also write the table in the bot's ratio-report format
#   --lstm-text F   the text the lstm eval reads its characters from, when the
#                   checkout lacks evals/lstm/data/lstm_full.txt (a large file some
#                   mirrors omit); the run then uses an overlay of the checkout with F
#                   in that place, and its lstm inputs differ from GradBench's
#
# Per-eval sizes: GRADBENCH_ARGS_<eval>="…" replaces the eval's flags below, e.g.
#   GRADBENCH_ARGS_gmm="-d 2 10 -k 5 10 -n 1000" benches/gradbench/run.sh --evals gmm …
#
# Needs python3 (3.11+), a C++ compiler and make, and nlohmann/json.hpp (Debian:
# nlohmann-json3-dev) for the `manual` tool, which every eval also uses to validate
# outputs. The Python packages (numpy, scipy, pydantic, dataclasses-json) go into a
# virtual environment under target/. Nothing is written into the checkout except
# cpp/json.hpp (copied from the system header when missing) and tools/manual/bin/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
evals="hello,lse,llsq,det,ode,gmm,kmeans,lstm,ba,ht,particle,saddle"
quick=0
manual=1
json=""
lstm_text=""
checkout=""
while [ $# -gt 0 ]; do
    case "$1" in
        --evals) evals="$2"; shift 2 ;;
        --quick) quick=1; shift ;;
        --no-manual) manual=0; shift ;;
        --json) json="$2"; shift 2 ;;
        --lstm-text) lstm_text="$2"; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) checkout="$1"; shift ;;
    esac
done
if [ -z "$checkout" ] || [ ! -f "$checkout/python/gradbench/gradbench/eval.py" ]; then
    echo "run.sh: give the path of a GradBench checkout (github.com/gradbench/gradbench);" \
         "'${checkout}' has no python/gradbench/gradbench/eval.py" >&2
    exit 2
fi
checkout=$(cd "$checkout" && pwd)

# Sizes: GradBench's defaults, except det's ell = 11, whose gradient does not fit in
# memory here (mochi keeps every minor's pullback: 2.5 GB at ell = 10, and ell = 11
# has 11 times as many minors), and ht's hand12 (complicated), whose data file the
# mirror lacks (ht's eval stops at the first missing file). --quick is a smoke run.
if [ "$quick" = 1 ]; then
    runs="--min-runs 1 --min-seconds 0.2"
    default_lse="-n 2500 40000"
    default_llsq="-n 16 1024 -m 128"
    default_det="-l 5 7 9"
    default_ode="-n 1000 10000 -s 1 10"
    default_gmm="-d 2 10 -k 5 10 -n 1000"
    default_kmeans="-k 10 100 -n 1000 -d 8"
    default_lstm="-l 2 -c 1024"
    default_ba="--max 3"
    default_ht="--max 2"
else
    runs="--min-runs 1 --min-seconds 1"
    default_lse=""
    default_llsq=""
    default_det="-l 5 6 7 8 9 10"
    default_ode=""
    default_gmm=""
    default_kmeans=""
    default_lstm=""
    default_ba=""
    default_ht="--max 11"
fi
default_hello=""
default_particle=""
default_saddle=""

# Python environment.
venv=${GRADBENCH_VENV:-$root/target/gradbench-venv}
if [ ! -x "$venv/bin/python" ]; then
    echo "run.sh: creating $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet numpy scipy pydantic dataclasses-json
fi
py="$venv/bin/python"

# The manual tool (the evals' reference implementation, and a column of the table).
if [ ! -f "$checkout/cpp/json.hpp" ]; then
    if [ -f /usr/include/nlohmann/json.hpp ]; then
        cp /usr/include/nlohmann/json.hpp "$checkout/cpp/json.hpp"
    else
        echo "run.sh: $checkout/cpp/json.hpp is missing and so is /usr/include/nlohmann/json.hpp;" \
             "install nlohmann-json3-dev (Debian/Ubuntu) or put json.hpp v3.11 there" >&2
        exit 2
    fi
fi
IFS=, read -r -a eval_list <<< "$evals"
# `manual` implements the evals listed in its evals.txt (not particle and saddle,
# whose evals check the outputs against constants).
has_manual() { grep -qx "$1" "$checkout/tools/manual/evals.txt"; }
targets=()
for e in "${eval_list[@]}"; do if has_manual "$e"; then targets+=("bin/$e"); fi; done
[ ${#targets[@]} = 0 ] || make -s -C "$checkout/tools/manual" "${targets[@]}" >&2

# The tool.
(cd "$root" && cargo build --release -p mochi-gradbench >&2)
tool="${CARGO_TARGET_DIR:-$root/target}/release/mochi-gradbench"

out="$root/target/gradbench-results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
echo "run.sh: results in $out" >&2
files=()
for e in "${eval_list[@]}"; do
    eval_checkout="$checkout"
    if [ "$e" = lstm ] && [ ! -s "$checkout/evals/lstm/data/lstm_full.txt" ]; then
        if [ -z "$lstm_text" ]; then
            echo "run.sh: skipping lstm: $checkout/evals/lstm/data/lstm_full.txt (the eval's text)" \
                 "is missing; --lstm-text FILE runs it on another text" >&2
            continue
        fi
        eval_checkout="$out/lstm-checkout"
        mkdir -p "$eval_checkout/evals/lstm/data"
        for d in python tools cpp; do ln -sfn "$checkout/$d" "$eval_checkout/$d"; done
        cp "$lstm_text" "$eval_checkout/evals/lstm/data/lstm_full.txt"
        echo "run.sh: lstm reads $lstm_text instead of GradBench's lstm_full.txt" >&2
    fi
    var="GRADBENCH_ARGS_$e"
    default_var="default_$e"
    args="${!var-${!default_var}} "
    [ "$e" = hello ] || args+="$runs"
    "$py" "$here/relay.py" session --checkout "$eval_checkout" --eval "$e" --tool mochi \
        --out "$out/$e.mochi.jsonl" --eval-args="$args" -- "$tool"
    files+=("$out/$e.mochi.jsonl")
    if [ "$manual" = 1 ] && has_manual "$e"; then
        "$py" "$here/relay.py" session --checkout "$eval_checkout" --eval "$e" --tool manual \
            --out "$out/$e.manual.jsonl" --eval-args="$args" -- \
            env PYTHONPATH="$checkout/python/gradbench" "$py" python/gradbench/gradbench/cpp.py manual
        files+=("$out/$e.manual.jsonl")
    fi
done
"$py" "$here/relay.py" table ${json:+--json "$json"} "${files[@]}" | tee "$out/table.md"
