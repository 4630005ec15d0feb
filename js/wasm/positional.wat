;; Coding 7's gap loop (spec 4.11 decoder) with 64-bit states, for the package's decoder.
;; Memory (set by src/positional-wasm.ts): the quotient symbol v of the first slot of each
;; 16 slots at 0 (4096 bytes), and its cum(v) | f(v) << 16 at 4096 (4096 x i32), f(v) as i32 at 65536, cum(v) at 66560 (then cum(Q + 1) =
;; 65536), the two lanes' final states at
;; 67584 (two i64), the payload's words (i32, little-endian) at $words, the output at $out:
;; the packed bits (mode 0, zeroed), the positions as f64 (mode 1), or (mode 2, for m <=
;; 2^31) for each byte with ones its index and its byte as a pair of i32, their count at
;; 67576. The 64-bit values m and the lanes' initial states come as 32-bit halves
;; (low, high), so that the caller needs no BigInt.
;; Returns the words read, or -1 (a one beyond m), -2 (the payload ends early), -3 (a gap
;; past m).
(module
  (memory (export "memory") 2)
  (func (export "gaps")
    (param $words i32) (param $W i32) (param $pos i32) (param $mlo i32) (param $mhi i32) (param $c i32)
    (param $lanes i32) (param $x0lo i32) (param $x0hi i32) (param $x1lo i32) (param $x1hi i32)
    (param $r i32) (param $RJ i32)
    (param $K i32) (param $Q i32) (param $out i32) (param $mode i32) (result i32)
    (local $m i64) (local $x0 i64) (local $x1 i64)
    (local $i i32) (local $x i64) (local $next i64) (local $avail i64) (local $q i64)
    (local $v i32) (local $slot i32) (local $rem i64) (local $g i64) (local $at i64)
    (local $r64 i64) (local $rj64 i64) (local $k64 i64) (local $need i32)
    (local $e i32) (local $d i32) (local $fv i32)
    (local $byte i32) (local $lastByte i32) (local $bits i32) (local $pairs i32)
    (local.set $lastByte (i32.const -1))
    (local.set $pairs (i32.const -1))
    (local.set $m (i64.or (i64.extend_i32_u (local.get $mlo)) (i64.shl (i64.extend_i32_u (local.get $mhi)) (i64.const 32))))
    (local.set $x0 (i64.or (i64.extend_i32_u (local.get $x0lo)) (i64.shl (i64.extend_i32_u (local.get $x0hi)) (i64.const 32))))
    (local.set $x1 (i64.or (i64.extend_i32_u (local.get $x1lo)) (i64.shl (i64.extend_i32_u (local.get $x1hi)) (i64.const 32))))
    (local.set $r64 (i64.extend_i32_u (local.get $r)))
    (local.set $rj64 (i64.extend_i32_u (local.get $RJ)))
    (local.set $k64 (i64.extend_i32_u (local.get $K)))
    (block $done
      (loop $gap
        (br_if $done (i32.ge_u (local.get $i) (local.get $c)))
        ;; the lane's state: gap i belongs to lane i mod lanes
        (if (i32.and (local.get $i) (i32.sub (local.get $lanes) (i32.const 1)))
          (then (local.set $x (local.get $x1)))
          (else (local.set $x (local.get $x0))))
        (local.set $avail (i64.sub (local.get $m) (local.get $next)))
        (if (i64.eqz (local.get $avail)) (then (return (i32.const -1))))
        (local.set $q (i64.const 0))
        ;; x = f(v) * (x >> 16) + (slot - cum(v))
        (local.set $slot (i32.and (i32.wrap_i64 (local.get $x)) (i32.const 0xffff)))
        ;; the slot's 16-slot bucket: its first slot's symbol v (a 4 KiB table) and
        ;; that symbol's cum(v) | f(v) << 16 (a 16 KiB table, both in the first-level
        ;; cache), two loads side by side, so that the step waits for one load, not
        ;; for a symbol and then its f(v)
        (local.set $e (i32.load offset=4096 (i32.and (i32.shr_u (local.get $slot) (i32.const 2)) (i32.const 0x3ffc))))
        (local.set $v (i32.load8_u (i32.shr_u (local.get $slot) (i32.const 4))))
        (local.set $d (i32.sub (local.get $slot) (i32.and (local.get $e) (i32.const 0xffff))))
        (local.set $fv (i32.shr_u (local.get $e) (i32.const 16)))
        (if (i32.ge_u (local.get $d) (local.get $fv))
          (then
            ;; the slot is past the bucket's first symbol: on while it is at or past
            ;; the next symbol's cumulative count (cum(Q + 1) = 65536 ends it)
            (block $found
              (loop $next
                (local.set $v (i32.add (local.get $v) (i32.const 1)))
                (br_if $found (i32.lt_u (local.get $slot)
                  (i32.load offset=66564 (i32.shl (local.get $v) (i32.const 2)))))
                (br $next)))
            (local.set $fv (i32.load offset=65536 (i32.shl (local.get $v) (i32.const 2))))
            (local.set $d (i32.sub (local.get $slot)
              (i32.load offset=66560 (i32.shl (local.get $v) (i32.const 2)))))))
        (local.set $x
          (i64.add
            (i64.mul (i64.extend_i32_u (local.get $fv)) (i64.shr_u (local.get $x) (i64.const 16)))
            (i64.extend_i32_u (local.get $d))))
        ;; an escape (rare: a gap of Q 2^r or more): renormalize, Q more, the same model again;
        ;; a loop of its own, off the common path, which then has no loop inside it (with
        ;; both in one loop, V8's code kept the state x in a stack slot, loaded and stored
        ;; on every step)
        (if (i32.eq (local.get $v) (local.get $Q))
          (then
            (loop $sym
              (if (i64.lt_u (local.get $x) (i64.const 0x80000000))
                (then
                  (if (i32.eq (local.get $pos) (local.get $W)) (then (return (i32.const -2))))
                  (local.set $x
                    (i64.or (i64.shl (local.get $x) (i64.const 32))
                      (i64.extend_i32_u
                        (i32.load (i32.add (local.get $words) (i32.shl (local.get $pos) (i32.const 2)))))))
                  (local.set $pos (i32.add (local.get $pos) (i32.const 1)))))
              (local.set $q (i64.add (local.get $q) (i64.extend_i32_u (local.get $Q))))
              (if (i64.ge_u (i64.shl (local.get $q) (local.get $r64)) (local.get $avail))
                (then (return (i32.const -3))))
              ;; the next symbol, as above
              (local.set $slot (i32.and (i32.wrap_i64 (local.get $x)) (i32.const 0xffff)))
              (local.set $e (i32.load offset=4096 (i32.and (i32.shr_u (local.get $slot) (i32.const 2)) (i32.const 0x3ffc))))
              (local.set $v (i32.load8_u (i32.shr_u (local.get $slot) (i32.const 4))))
              (local.set $d (i32.sub (local.get $slot) (i32.and (local.get $e) (i32.const 0xffff))))
              (local.set $fv (i32.shr_u (local.get $e) (i32.const 16)))
              (if (i32.ge_u (local.get $d) (local.get $fv))
                (then
                  (block $found2
                    (loop $next2
                      (local.set $v (i32.add (local.get $v) (i32.const 1)))
                      (br_if $found2 (i32.lt_u (local.get $slot)
                        (i32.load offset=66564 (i32.shl (local.get $v) (i32.const 2)))))
                      (br $next2)))
                  (local.set $fv (i32.load offset=65536 (i32.shl (local.get $v) (i32.const 2))))
                  (local.set $d (i32.sub (local.get $slot)
                    (i32.load offset=66560 (i32.shl (local.get $v) (i32.const 2)))))))
              (local.set $x
                (i64.add
                  (i64.mul (i64.extend_i32_u (local.get $fv)) (i64.shr_u (local.get $x) (i64.const 16)))
                  (i64.extend_i32_u (local.get $d))))
              (br_if $sym (i32.eq (local.get $v) (local.get $Q))))))
        ;; the low R_J remainder bits, from the same step
        (local.set $rem
          (i64.and (local.get $x) (i64.sub (i64.shl (i64.const 1) (local.get $rj64)) (i64.const 1))))
        (local.set $x (i64.shr_u (local.get $x) (local.get $rj64)))
        ;; a renormalization about every other gap, without a branch (the word at W, read
        ;; and not taken, is the 8 bytes of slack after the payload's words)
        (local.set $need (i64.lt_u (local.get $x) (i64.const 0x80000000)))
        (if (i32.and (local.get $need) (i32.eq (local.get $pos) (local.get $W))) (then (return (i32.const -2))))
        (local.set $x
          (select
            (i64.or (i64.shl (local.get $x) (i64.const 32))
              (i64.extend_i32_u (i32.load (i32.add (local.get $words) (i32.shl (local.get $pos) (i32.const 2))))))
            (local.get $x)
            (local.get $need)))
        (local.set $pos (i32.add (local.get $pos) (local.get $need)))
        ;; the high K remainder bits
        (if (local.get $K)
          (then
            (local.set $rem
              (i64.or (local.get $rem)
                (i64.shl
                  (i64.and (local.get $x) (i64.sub (i64.shl (i64.const 1) (local.get $k64)) (i64.const 1)))
                  (local.get $rj64))))
            (local.set $x (i64.shr_u (local.get $x) (local.get $k64)))
            (local.set $need (i64.lt_u (local.get $x) (i64.const 0x80000000)))
            (if (i32.and (local.get $need) (i32.eq (local.get $pos) (local.get $W))) (then (return (i32.const -2))))
            (local.set $x
              (select
                (i64.or (i64.shl (local.get $x) (i64.const 32))
                  (i64.extend_i32_u (i32.load (i32.add (local.get $words) (i32.shl (local.get $pos) (i32.const 2))))))
                (local.get $x)
                (local.get $need)))
            (local.set $pos (i32.add (local.get $pos) (local.get $need)))))
        (if (i32.and (local.get $i) (i32.sub (local.get $lanes) (i32.const 1)))
          (then (local.set $x1 (local.get $x)))
          (else (local.set $x0 (local.get $x))))
        ;; g = (q + v) 2^r + rem, below avail (q 2^r < avail was checked; v < Q <= 153)
        (local.set $g
          (i64.or (i64.shl (i64.add (local.get $q) (i64.extend_i32_u (local.get $v))) (local.get $r64))
            (local.get $rem)))
        (if (i64.ge_u (local.get $g) (local.get $avail)) (then (return (i32.const -3))))
        (local.set $at (i64.add (local.get $next) (local.get $g)))
        (if (local.get $mode)
          (then
            (if (i32.eq (local.get $mode) (i32.const 2))
              (then
                ;; the one's byte and bit; a byte's ones (the positions rise) joined into
                ;; one pair (byte index, byte) at pair $pairs - 1
                (local.set $byte (i32.wrap_i64 (i64.shr_u (local.get $at) (i64.const 3))))
                (if (i32.ne (local.get $byte) (local.get $lastByte))
                  (then
                    (local.set $pairs (i32.add (local.get $pairs) (i32.const 1)))
                    (local.set $lastByte (local.get $byte))
                    (local.set $bits (i32.const 0))))
                (local.set $bits (i32.or (local.get $bits)
                  (i32.shl (i32.const 1) (i32.and (i32.wrap_i64 (local.get $at)) (i32.const 7)))))
                (i64.store (i32.add (local.get $out) (i32.shl (local.get $pairs) (i32.const 3)))
                  (i64.or (i64.extend_i32_u (local.get $byte)) (i64.shl (i64.extend_i32_u (local.get $bits)) (i64.const 32)))))
              (else
                (f64.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 3)))
                  (f64.convert_i64_u (local.get $at))))))
          (else
            (i32.store8
              (i32.add (local.get $out) (i32.wrap_i64 (i64.shr_u (local.get $at) (i64.const 3))))
              (i32.or
                (i32.load8_u
                  (i32.add (local.get $out) (i32.wrap_i64 (i64.shr_u (local.get $at) (i64.const 3)))))
                (i32.shl (i32.const 1) (i32.and (i32.wrap_i64 (local.get $at)) (i32.const 7)))))))
        (local.set $next (i64.add (local.get $at) (i64.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $gap)))
    (i32.store (i32.const 67576) (i32.add (local.get $pairs) (i32.const 1)))
    (i64.store (i32.const 67584) (local.get $x0))
    (i64.store (i32.const 67592) (local.get $x1))
    (local.get $pos)))
