#!/usr/bin/env bash
# Run fuzz targets one after the other, each for the same time, and report executions.
#
#   fuzz/run.sh SECONDS [TARGET...]      (all targets when none is named)
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). New inputs go to
# fuzz/work/TARGET (not committed); the committed corpus fuzz/corpus/TARGET is read as seeds.
# Logs are fuzz/logs/TARGET.log; crashes land in fuzz/artifacts/TARGET/. Environment:
#   SANITIZER   cargo fuzz --sanitizer (default none: the library's only unsafe code is
#               its kernels, beside their codings, each fuzzed against its scalar twin, and
#               two memory hints; address sanitizing halves the speed)
#   FUZZ_ARGS   extra libFuzzer arguments
#   LOG_DIR     where the logs go (default fuzz/logs)
# Exit status: 0 when every target ran without a crash, leak or timeout, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
sanitizer=${SANITIZER:-none}
if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

# -a: debug assertions and overflow checks on. The binaries are copied once, so that
# editing the crate during a long run changes nothing under it.
built="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src fuzz/src fuzz/checks testkit || echo ' (modified)')"
cargo +nightly fuzz build -s "$sanitizer" -a || exit 1
logs=${LOG_DIR:-fuzz/logs}
bin=fuzz/work/bin-$(basename "$logs")
mkdir -p "$logs" "$bin"
for t in "${targets[@]}"; do
    cp "fuzz/target/x86_64-unknown-linux-gnu/release/$t" "$bin/$t" || exit 1
done
status=0
for t in "${targets[@]}"; do
    mkdir -p "fuzz/work/$t" "fuzz/artifacts/$t"
    log="$logs/$t.log"
    echo "bloomwire $built, $t, $seconds s, sanitizer $sanitizer, $(date -u +%FT%TZ)" >"$log"
    # shellcheck disable=SC2086
    "$bin/$t" -artifact_prefix="fuzz/artifacts/$t/" -dict=fuzz/bloomwire.dict \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        ${FUZZ_ARGS:-} "fuzz/work/$t" "fuzz/corpus/$t" >>"$log" 2>&1
    rc=$?
    execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
    cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+')
    if [ $rc -eq 0 ]; then
        echo "$t: ${execs:-?} executions in $seconds s, $cov, no crash"
    else
        status=1
        echo "$t: FAILED after ${execs:-?} executions (exit $rc), see $log:"
        grep -E 'panicked|ERROR: libFuzzer|Test unit written' -A1 "$log" | head -8
    fi
done
exit $status
