#!/usr/bin/env bash
# CI of the npm package `bloomwire` (js/): dev dependencies from the lock file, the build,
# node's test runner over spec/vectors, the program's frames and the package's own (with
# the WebAssembly loops, then again with the JavaScript loops alone), the browser test in
# Debian's headless Chromium, and `npm pack` installed in a fresh directory. Exits non-zero on any failure; the last line is "N passed, N failed".
set -uo pipefail
# a BLOOMWIRE_CLI relative to the caller's directory stays right after the cd below
if [ -n "${BLOOMWIRE_CLI:-}" ] && [ "${BLOOMWIRE_CLI#/}" = "$BLOOMWIRE_CLI" ]; then
  BLOOMWIRE_CLI="$(pwd)/$BLOOMWIRE_CLI"
fi
cd "$(dirname "$0")"
here=$(pwd)
export BLOOMWIRE_CLI="${BLOOMWIRE_CLI:-$here/../target/debug/bloomwire}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed_steps=0

step() { echo "== $*"; }

step "npm ci"
npm ci --no-audit --no-fund || exit 1

step "chromium"
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium) >/dev/null 2>&1 ||
      echo "chromium could not be installed (apt-get failed): the browser test will be skipped"
  else
    echo "chromium is not installed and this user cannot run apt-get: the browser test will be skipped"
  fi
fi

step "build"
npm run build || exit 1

if [ ! -x "$BLOOMWIRE_CLI" ]; then
  echo "note: the program is not at $BLOOMWIRE_CLI: the program's tests will be skipped"
fi

step "node --test test/"
node --test --test-reporter=tap test/ 2>&1 | tee -a "$log" | grep -Ev '^\s+(duration_ms|\.\.\.|---)' | grep -E '^(not ok|# )' | grep -v '^# Subtest' || true
[ "${PIPESTATUS[0]}" = 0 ] || failed_steps=$((failed_steps + 1))

# test/kernels.test.mjs forces each path of the WebAssembly loops in turn; the whole suite
# runs once more on the JavaScript loops alone (the fallback where WebAssembly is missing)
step "node --test test/ with BLOOMWIRE_NO_WASM=1 (the JavaScript loops)"
BLOOMWIRE_NO_WASM=1 node --test --test-reporter=tap test/ 2>&1 | tee -a "$log" | grep -Ev '^\s+(duration_ms|\.\.\.|---)' | grep -E '^(not ok|# )' | grep -v '^# Subtest' || true
[ "${PIPESTATUS[0]}" = 0 ] || failed_steps=$((failed_steps + 1))

step "browser test (headless Chromium)"
node --test --test-reporter=tap test-browser/ 2>&1 | tee -a "$log" | grep -E '^(not ok|ok|# )' | grep -v '^# Subtest' || true
[ "${PIPESTATUS[0]}" = 0 ] || failed_steps=$((failed_steps + 1))

step "conformance kit (spec/conformance) through conformance-adapter.mjs"
kit_passed=0
kit_failed=0
if [ ! -f ../spec/conformance/run.py ]; then
  echo "skipped: spec/conformance/run.py is not in this tree"
elif ! "$BLOOMWIRE_CLI" conform --help >/dev/null 2>&1; then
  echo "skipped: the program at $BLOOMWIRE_CLI has no conform command (the kit's oracle)"
else
  for profile in full core; do
    out=$(python3 ../spec/conformance/run.py --adapter "node $here/conformance-adapter.mjs --profile $profile" \
      --oracle "$BLOOMWIRE_CLI conform" --seed 1 2>&1)
    status=$?
    echo "$out" | grep -E '^(results|  [a-z].*(passed|failed)|FAIL)' | head -40
    last=$(echo "$out" | tail -1)
    if [ "$status" = 2 ]; then
      echo "profile $profile skipped: the oracle cannot answer it ($last)"
      continue
    fi
    echo "profile $profile: $last"
    p=$(echo "$last" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1/p')
    f=$(echo "$last" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\2/p')
    kit_passed=$((kit_passed + ${p:-0}))
    kit_failed=$((kit_failed + ${f:-1}))
    [ "$status" = 0 ] || failed_steps=$((failed_steps + 1))
  done
fi

step "npm pack, install in a fresh directory, import"
pack_ok=0
tmp=$(mktemp -d)
if tarball=$(npm pack --silent --pack-destination "$tmp" | tail -1) &&
  (cd "$tmp" && npm init -y >/dev/null && npm install --no-audit --no-fund "./$tarball" >/dev/null) &&
  (cd "$tmp" && node --input-type=module -e '
    import { BloomFilter, encodeFrame, decodeFrame } from "bloomwire";
    const f = new BloomFilter({ m: 10000, k: 4 });
    f.insert("hello");
    const g = decodeFrame(encodeFrame(f)).filter;
    if (!g.contains("hello") || g.contains("absent-key-xyz")) process.exit(1);
    console.log("import from the installed tarball: ok");'); then
  pack_ok=1
fi
rm -rf "$tmp"

passed=$(grep -E '^# pass ' "$log" | awk '{s += $3} END {print s + 0}')
failed=$(grep -E '^# fail ' "$log" | awk '{s += $3} END {print s + 0}')
skipped=$(grep -E '^# skipped ' "$log" | awk '{s += $3} END {print s + 0}')
if [ "$pack_ok" = 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
passed=$((passed + kit_passed))
failed=$((failed + kit_failed))
[ "$skipped" = 0 ] || echo "($skipped skipped: see the reasons above)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$failed_steps" = 0 ]
