#!/usr/bin/env bash
# The conformance kit in CI: the program's adapter and the reference decoder, each in the
# Full and the Core profile, judged by the program's adapter (the oracle) over the vectors,
# a corpus from a fixed seed and its mutants. Uses the program at $BLOOMWIRE_CLI, else
# target/debug/bloomwire (built when missing). Prints each run's results and a closing
# line `N passed, N failed` over all four; exits non-zero when any check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."

CLI="${BLOOMWIRE_CLI:-target/debug/bloomwire}"
if [ ! -x "$CLI" ]; then
    echo "== building the program (cargo build -p bloomwire-cli)"
    cargo build -q -p bloomwire-cli || exit 1
fi
SEED="${CONFORMANCE_SEED:-20261128}"
SIZES=(--frames "${CONFORMANCE_FRAMES:-200}" --mutants "${CONFORMANCE_MUTANTS:-3000}")

total_passed=0
total_failed=0
status=0
run() {
    local label="$1" adapter="$2" out rc line
    echo "== conformance: $label"
    out="$(python3 spec/conformance/run.py --adapter "$adapter" --oracle "$CLI conform" \
        --seed "$SEED" "${SIZES[@]}" 2>&1)"
    rc=$?
    echo "$out"
    line="$(echo "$out" | tail -n 1)"
    if [[ "$line" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        total_passed=$((total_passed + BASH_REMATCH[1]))
        total_failed=$((total_failed + BASH_REMATCH[2]))
    else
        total_failed=$((total_failed + 1))
    fi
    if [ "$rc" -ne 0 ]; then
        status=1
    fi
}

run "program, Full profile" "$CLI conform --profile full"
run "program, Core profile" "$CLI conform --profile core"
run "reference decoder, Full profile" "python3 spec/reference/bloomwire_ref.py conform --profile full"
run "reference decoder, Core profile" "python3 spec/reference/bloomwire_ref.py conform --profile core"

echo "== conformance: all four runs"
echo "$total_passed passed, $total_failed failed"
if [ "$total_failed" -ne 0 ]; then
    status=1
fi
exit "$status"
