#!/usr/bin/env bash
# The C library's checks: the header compiled as C99 and as C++ at -Wall -Wextra -Werror;
# the C tests (every function, the spec's vectors read from their manifests, frames the
# program makes) under AddressSanitizer and UndefinedBehaviorSanitizer, then once under
# valgrind's memcheck; the program reading the frames the library writes; the install
# step with its pkg-config file; the socket example. Installs valgrind, g++ and pkg-config
# with apt-get when missing.
#
#   capi/ci.sh            (from anywhere; builds in the workspace's target/)
#
# Prints one line per step and a closing "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR=never
CC=${CC:-gcc}
CXX=${CXX:-g++}
work=target/capi-ci
mkdir -p "$work"
passed=0
failed=0

step() { # step NAME COMMAND...: run, log to $work/NAME.log, count
    local name=$1
    shift
    if "$@" >"$work/$name.log" 2>&1; then
        passed=$((passed + 1))
        echo "ok    $name"
    else
        failed=$((failed + 1))
        echo "FAIL  $name (log: $work/$name.log)"
        tail -n 30 "$work/$name.log" | sed 's/^/      /'
    fi
}

need() { # need COMMAND PACKAGE: install the Debian package when the command is missing
    command -v "$1" >/dev/null && return 0
    { apt-get update && apt-get install -y "$2"; } >/dev/null 2>&1 ||
        sudo sh -c "apt-get update && apt-get install -y $2" >/dev/null 2>&1
    command -v "$1" >/dev/null
}

# The static library (debug: the checks' speed is not the point), and the program whose
# frames the tests read.
if ! cargo build -p bloomwire-capi -p bloomwire-cli >"$work/build.log" 2>&1; then
    cat "$work/build.log"
    echo "0 passed, 1 failed"
    exit 1
fi
lib=target/debug/libbloomwire_capi.a
libs=(-pthread -ldl -lm)
inc=(-Icapi/include -Icapi/tests)
warn=(-Wall -Wextra -Werror)

# The header alone, and the whole test program, as C99 and as C++.
header_c() {
    printf '#include "bloomwire.h"\nint main(void) { return bw_status_name(BW_OK)[0] != 0 ? 0 : 1; }\n' \
        >"$work/header.c"
    $CC -std=c99 -pedantic "${warn[@]}" "${inc[@]}" "$work/header.c" "$lib" "${libs[@]}" -o "$work/header_c" &&
        "$work/header_c"
}
header_cxx() {
    need "$CXX" g++ || return 1
    $CXX -std=c++11 -pedantic "${warn[@]}" "${inc[@]}" -x c++ "$work/header.c" -x none "$lib" \
        "${libs[@]}" -o "$work/header_cxx" && "$work/header_cxx" &&
        $CXX -std=c++11 "${warn[@]}" -Wno-missing-field-initializers "${inc[@]}" -x c++ \
            capi/tests/test_capi.c -x none "$lib" "${libs[@]}" -o "$work/test_capi_cxx"
}
step header-c99 header_c
step header-c++ header_cxx

# Frames the program makes from a keys file, and what its inspect says of them.
program_frames() {
    local bin=target/debug/bloomwire dir=$work/program
    rm -rf "$dir" && mkdir -p "$dir"
    for i in $(seq 0 2999); do echo "key-$i"; done >"$dir/keys.txt"
    : >"$dir/frames.tsv"
    local args name
    while read -r name args; do
        # shellcheck disable=SC2086
        "$bin" --quiet build --keys "$dir/keys.txt" -o "$dir/$name.blwr" $args || return 1
        "$bin" inspect --json "$dir/$name.blwr" >"$dir/$name.json" || return 1
        printf '%s\t%s\t%s\n' "$dir/$name.blwr" "$dir/keys.txt" "$dir/$name.json" >>"$dir/frames.tsv"
    done <<'EOF'
default
positional --coding positional
known-p --coding known-p --fpr 0.001
partitioned --layout partitioned
counting --counting 4
metadata --metadata-hex 0102 --generation 7
EOF
    python3 capi/tests/cases.py spec/vectors "$dir/frames.tsv" >"$work/cases.txt"
}
step program-frames program_frames

# The C tests under ASan and UBSan (every finding fatal), linked with the static library.
sanitized() {
    $CC -std=c99 -g -O1 "${warn[@]}" -fsanitize=address,undefined -fno-sanitize-recover=all \
        -fno-omit-frame-pointer "${inc[@]}" capi/tests/test_capi.c "$lib" "${libs[@]}" \
        -o "$work/test_capi_asan" &&
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
            "$work/test_capi_asan" spec/vectors "$work/cases.txt" "$work/program"
}
step tests-asan-ubsan sanitized

# The program reads what the C library wrote: inspect checks each frame whole, query finds
# every key (exit status 0).
program_reads() {
    local bin=target/debug/bloomwire dir=$work/program f
    for f in c_default c_positional c_counting; do
        "$bin" inspect "$dir/$f.blwr" >/dev/null &&
            "$bin" query "$dir/$f.blwr" --keys "$dir/c_keys.txt" --count || return 1
    done
    "$bin" inspect --key-file "$dir/c_key.bin" "$dir/c_keyed.blwr" | grep -E 'verified|metadata' &&
        "$bin" query --key-file "$dir/c_key.bin" "$dir/c_keyed.blwr" --keys "$dir/c_keys.txt" --count
}
step program-reads-c-frames program_reads

# Once under valgrind's memcheck: no leak, no invalid access (a plain build).
memcheck() {
    need valgrind valgrind || return 1
    $CC -std=c99 -g -O1 "${warn[@]}" "${inc[@]}" capi/tests/test_capi.c "$lib" "${libs[@]}" \
        -o "$work/test_capi" &&
        valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
            --error-exitcode=1 --quiet "$work/test_capi" spec/vectors "$work/cases.txt"
}
step tests-valgrind memcheck

# The socket example: two processes on 127.0.0.1 exchanging a keyed filter and two deltas.
example() {
    $CC -std=c99 "${warn[@]}" -Icapi/include capi/examples/exchange.c "$lib" "${libs[@]}" \
        -o "$work/exchange" && timeout 60 "$work/exchange"
}
if [ -f capi/examples/exchange.c ]; then
    step example-exchange example
    cat "$work/example-exchange.log" 2>/dev/null | sed 's/^/      /'
fi

# The README's page of C, as written there.
readme() {
    python3 -c "import sys; print(open('capi/README.md').read().split('\`\`\`c\n')[1].split('\`\`\`')[0])" \
        >"$work/readme.c" &&
        $CC -std=c99 "${warn[@]}" -Icapi/include "$work/readme.c" "$lib" "${libs[@]}" \
            -o "$work/readme" && "$work/readme"
}
step readme-example readme

# The install step and its pkg-config file: the example built against the installed static
# library, and against the shared one.
installed() {
    local prefix=$PWD/$work/prefix
    rm -rf "$prefix"
    need pkg-config pkg-config || return 1
    PROFILE=debug capi/install.sh "$prefix" &&
        export PKG_CONFIG_PATH=$prefix/lib/pkgconfig &&
        # shellcheck disable=SC2046
        $CC -std=c99 "${warn[@]}" capi/examples/exchange.c -o "$work/exchange_pc" \
            $(pkg-config --cflags bloomwire) "$prefix/lib/libbloomwire_capi.a" \
            $(pkg-config --libs-only-l --static bloomwire | sed 's/-lbloomwire_capi//') &&
        # shellcheck disable=SC2046
        $CC -std=c99 "${warn[@]}" capi/examples/exchange.c -o "$work/exchange_so" \
            $(pkg-config --cflags --libs bloomwire) &&
        LD_LIBRARY_PATH=$prefix/lib "$work/exchange_so"
}
step install-pkg-config installed

for t in tests-asan-ubsan tests-valgrind; do
    grep -E '^[0-9]+ passed, [0-9]+ failed' "$work/$t.log" 2>/dev/null | sed "s/^/      $t: /"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
