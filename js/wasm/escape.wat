;; Coding 11's loop (spec 4.15 decoder): the coded bytes T, in groups of four primary steps
;; then the group's escapes, over one LSB-first bit stream; and its two tables, built for
;; each frame where the loop reads them. Memory (written by src/escape-wasm.ts): the
;; primary table at 0 (4096 x u32) and the secondary at 16384 (2048 x u32), each entry
;; `byte (256: escape) | nb << 9 | base << 13`; the states out at 24576 (u0, u1, u2, u3, y
;; as i32, then the count of ones of the first T & ~7 bytes); an alphabet's runs of equal
;; frequency at 24640 (for `spread`); the symbols' bytes of each alphabet at 24896 and
;; 25272 (i32); the masks of 0 .. 15 bits at 25928 (i32: a step reads its mask, where
;; making it takes a shift by a variable count); the payload from $in (L bytes, then at least 32 bytes of slack); the bytes
;; out from $out.
;; A step reads at most 12 bits, a group at most 92, and each group ends with the check
;; that the bits read are within the payload (else -1: a read past its end, spec 4.13), so
;; every load stays inside the slack. Returns the bits read.
(module
  (import "env" "memory" (memory 1))
  (func (export "escape")
    (param $in i32) (param $L i32) (param $T i32) (param $out i32)
    (param $u0 i32) (param $u1 i32) (param $u2 i32) (param $u3 i32) (param $y i32)
    (result i32)
    (local $j i32) (local $t i32) (local $T4 i32) (local $total i32) (local $buf i64)
    (local $e0 i32) (local $e1 i32) (local $e2 i32) (local $e3 i32) (local $e i32) (local $nb i32)
    (local $k i32) (local $s i32) (local $u i32) (local $ones i32)
    (local.set $j (i32.const 59))
    (local.set $total (i32.shl (local.get $L) (i32.const 3)))
    (local.set $T4 (i32.and (local.get $T) (i32.const -4)))
    (block $done
      (loop $group
        (br_if $done (i32.ge_u (local.get $t) (local.get $T4)))
        ;; at least 57 bits from bit j
        (local.set $buf (i64.shr_u (i64.load (i32.add (local.get $in) (i32.shr_u (local.get $j) (i32.const 3))))
          (i64.extend_i32_u (i32.and (local.get $j) (i32.const 7)))))
        ;; four primary steps: u = base + read(nb)
        (local.set $e0 (i32.load (i32.shl (local.get $u0) (i32.const 2))))
        (local.set $e1 (i32.load (i32.shl (local.get $u1) (i32.const 2))))
        (local.set $e2 (i32.load (i32.shl (local.get $u2) (i32.const 2))))
        (local.set $e3 (i32.load (i32.shl (local.get $u3) (i32.const 2))))
        (local.set $nb (i32.and (i32.shr_u (local.get $e0) (i32.const 9)) (i32.const 15)))
        (local.set $u0 (i32.add (i32.shr_u (local.get $e0) (i32.const 13))
          (i32.and (i32.wrap_i64 (local.get $buf)) (i32.load offset=25928 (i32.shl (local.get $nb) (i32.const 2))))))
        (local.set $buf (i64.shr_u (local.get $buf) (i64.extend_i32_u (local.get $nb))))
        (local.set $j (i32.add (local.get $j) (local.get $nb)))
        (local.set $nb (i32.and (i32.shr_u (local.get $e1) (i32.const 9)) (i32.const 15)))
        (local.set $u1 (i32.add (i32.shr_u (local.get $e1) (i32.const 13))
          (i32.and (i32.wrap_i64 (local.get $buf)) (i32.load offset=25928 (i32.shl (local.get $nb) (i32.const 2))))))
        (local.set $buf (i64.shr_u (local.get $buf) (i64.extend_i32_u (local.get $nb))))
        (local.set $j (i32.add (local.get $j) (local.get $nb)))
        (local.set $nb (i32.and (i32.shr_u (local.get $e2) (i32.const 9)) (i32.const 15)))
        (local.set $u2 (i32.add (i32.shr_u (local.get $e2) (i32.const 13))
          (i32.and (i32.wrap_i64 (local.get $buf)) (i32.load offset=25928 (i32.shl (local.get $nb) (i32.const 2))))))
        (local.set $buf (i64.shr_u (local.get $buf) (i64.extend_i32_u (local.get $nb))))
        (local.set $j (i32.add (local.get $j) (local.get $nb)))
        (local.set $nb (i32.and (i32.shr_u (local.get $e3) (i32.const 9)) (i32.const 15)))
        (local.set $u3 (i32.add (i32.shr_u (local.get $e3) (i32.const 13))
          (i32.and (i32.wrap_i64 (local.get $buf)) (i32.load offset=25928 (i32.shl (local.get $nb) (i32.const 2))))))
        (local.set $j (i32.add (local.get $j) (local.get $nb)))
        ;; the four bytes, each stored as it is (an escape's entry has byte bits 0, and its
        ;; byte is stored over it below)
        (i32.store8 (i32.add (local.get $out) (local.get $t)) (local.get $e0))
        (i32.store8 offset=1 (i32.add (local.get $out) (local.get $t)) (local.get $e1))
        (i32.store8 offset=2 (i32.add (local.get $out) (local.get $t)) (local.get $e2))
        (i32.store8 offset=3 (i32.add (local.get $out) (local.get $t)) (local.get $e3))
        (if (i32.and (i32.or (i32.or (local.get $e0) (local.get $e1)) (i32.or (local.get $e2) (local.get $e3))) (i32.const 256))
          (then
            ;; the escaped bytes of the group, in order, from the secondary state
            (local.set $k (i32.const 0))
            (loop $esc
              (if (i32.and
                    (i32.shr_u
                      (select (select (local.get $e0) (local.get $e1) (i32.eqz (local.get $k)))
                              (select (local.get $e2) (local.get $e3) (i32.eq (local.get $k) (i32.const 2)))
                              (i32.lt_u (local.get $k) (i32.const 2)))
                      (i32.const 8))
                    (i32.const 1))
                (then
                  (local.set $buf (i64.shr_u (i64.load (i32.add (local.get $in) (i32.shr_u (local.get $j) (i32.const 3))))
                    (i64.extend_i32_u (i32.and (local.get $j) (i32.const 7)))))
                  (local.set $e (i32.load offset=16384 (i32.shl (local.get $y) (i32.const 2))))
                  (i32.store8 (i32.add (local.get $out) (i32.add (local.get $t) (local.get $k))) (local.get $e))
                  (local.set $nb (i32.and (i32.shr_u (local.get $e) (i32.const 9)) (i32.const 15)))
                  (local.set $y (i32.add (i32.shr_u (local.get $e) (i32.const 13))
                    (i32.and (i32.wrap_i64 (local.get $buf)) (i32.load offset=25928 (i32.shl (local.get $nb) (i32.const 2))))))
                  (local.set $j (i32.add (local.get $j) (local.get $nb)))))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (br_if $esc (i32.lt_u (local.get $k) (i32.const 4))))))
        (if (i32.gt_u (local.get $j) (local.get $total)) (then (return (i32.const -1))))
        (local.set $t (i32.add (local.get $t) (i32.const 4)))
        (br $group)))
    ;; the ones of the first T & ~7 bytes, eight at a time
    (local.set $s (local.get $out))
    (local.set $u (i32.add (local.get $out) (i32.and (local.get $T) (i32.const -8))))
    (block $counted
      (loop $count
        (br_if $counted (i32.ge_u (local.get $s) (local.get $u)))
        (local.set $ones (i32.add (local.get $ones) (i32.wrap_i64 (i64.popcnt (i64.load (local.get $s))))))
        (local.set $s (i32.add (local.get $s) (i32.const 8)))
        (br $count)))
    ;; the last group, shorter than four: its states and primary entries through memory
    (i32.store offset=24576 (i32.const 0) (local.get $u0))
    (i32.store offset=24580 (i32.const 0) (local.get $u1))
    (i32.store offset=24584 (i32.const 0) (local.get $u2))
    (i32.store offset=24588 (i32.const 0) (local.get $u3))
    (if (i32.lt_u (local.get $T4) (local.get $T))
      (then
        (local.set $s (i32.const 0))
        (loop $prim
          (local.set $buf (i64.shr_u (i64.load (i32.add (local.get $in) (i32.shr_u (local.get $j) (i32.const 3))))
            (i64.extend_i32_u (i32.and (local.get $j) (i32.const 7)))))
          (local.set $u (i32.load offset=24576 (i32.shl (local.get $s) (i32.const 2))))
          (local.set $e (i32.load (i32.shl (local.get $u) (i32.const 2))))
          (i32.store offset=24608 (i32.shl (local.get $s) (i32.const 2)) (local.get $e))
          (local.set $nb (i32.and (i32.shr_u (local.get $e) (i32.const 9)) (i32.const 15)))
          (i32.store offset=24576 (i32.shl (local.get $s) (i32.const 2))
            (i32.add (i32.shr_u (local.get $e) (i32.const 13))
              (i32.and (i32.wrap_i64 (local.get $buf)) (i32.load offset=25928 (i32.shl (local.get $nb) (i32.const 2))))))
          (local.set $j (i32.add (local.get $j) (local.get $nb)))
          (local.set $s (i32.add (local.get $s) (i32.const 1)))
          (br_if $prim (i32.lt_u (i32.add (local.get $T4) (local.get $s)) (local.get $T))))
        (local.set $s (i32.const 0))
        (loop $sec
          (local.set $e (i32.load offset=24608 (i32.shl (local.get $s) (i32.const 2))))
          (if (i32.and (local.get $e) (i32.const 256))
            (then
              (local.set $buf (i64.shr_u (i64.load (i32.add (local.get $in) (i32.shr_u (local.get $j) (i32.const 3))))
                (i64.extend_i32_u (i32.and (local.get $j) (i32.const 7)))))
              (local.set $e (i32.load offset=16384 (i32.shl (local.get $y) (i32.const 2))))
              (local.set $nb (i32.and (i32.shr_u (local.get $e) (i32.const 9)) (i32.const 15)))
              (local.set $y (i32.add (i32.shr_u (local.get $e) (i32.const 13))
                (i32.and (i32.wrap_i64 (local.get $buf)) (i32.load offset=25928 (i32.shl (local.get $nb) (i32.const 2))))))
              (local.set $j (i32.add (local.get $j) (local.get $nb)))))
          (i32.store8 (i32.add (local.get $out) (i32.add (local.get $T4) (local.get $s))) (local.get $e))
          (local.set $s (i32.add (local.get $s) (i32.const 1)))
          (br_if $sec (i32.lt_u (i32.add (local.get $T4) (local.get $s)) (local.get $T))))))
    (i32.store offset=24592 (i32.const 0) (local.get $y))
    (i32.store offset=24596 (i32.const 0) (local.get $ones))
    (local.get $j))
  ;; Spec 4.15 Tables, as models.ts's escapeTable builds them (its comment says why this is
  ;; the spec's sorted spread): groups from..to - 1 of the symbols of frequency F whose
  ;; bytes are the n at $bytes, from position t of $tab on; returns the position after.
  (func $groups (param $tab i32) (param $t i32) (param $from i32) (param $to i32) (param $F i32)
      (param $precision i32) (param $bytes i32) (param $n i32) (result i32)
    (local $k i32) (local $nb i32) (local $hi i32) (local $c i32) (local $lz i32) (local $end i32) (local $step i32)
    (if (i32.eq (local.get $n) (i32.const 1))
      (then
        ;; one symbol (the primary filler, often): k = F + i keeps its nb up to the next
        ;; power of two, and its entry grows by 2^nb in base there
        (block $done1
          (loop $range
            (br_if $done1 (i32.ge_u (local.get $from) (local.get $to)))
            (local.set $k (i32.add (local.get $F) (local.get $from)))
            (local.set $lz (i32.clz (local.get $k)))
            (local.set $nb (i32.sub (local.get $precision) (i32.sub (i32.const 31) (local.get $lz))))
            (local.set $end (i32.sub (i32.shl (i32.const 2) (i32.sub (i32.const 31) (local.get $lz))) (local.get $F)))
            (if (i32.gt_u (local.get $end) (local.get $to)) (then (local.set $end (local.get $to))))
            (local.set $hi (i32.or (i32.load (local.get $bytes))
              (i32.or (i32.shl (local.get $nb) (i32.const 9))
                (i32.shl (i32.sub (i32.shl (local.get $k) (local.get $nb)) (i32.shl (i32.const 1) (local.get $precision)))
                  (i32.const 13)))))
            (local.set $step (i32.shl (i32.const 1) (i32.add (local.get $nb) (i32.const 13))))
            (loop $one
              (i32.store (i32.add (local.get $tab) (i32.shl (local.get $t) (i32.const 2))) (local.get $hi))
              (local.set $hi (i32.add (local.get $hi) (local.get $step)))
              (local.set $t (i32.add (local.get $t) (i32.const 1)))
              (local.set $from (i32.add (local.get $from) (i32.const 1)))
              (br_if $one (i32.lt_u (local.get $from) (local.get $end))))
            (br $range)))
        (return (local.get $t))))
    (block $done
      (loop $group
        (br_if $done (i32.ge_u (local.get $from) (local.get $to)))
        ;; state k = F + i: nb = precision - floor(log2 k), base = k 2^nb - 2^precision
        (local.set $k (i32.add (local.get $F) (local.get $from)))
        (local.set $nb (i32.sub (local.get $precision) (i32.sub (i32.const 31) (i32.clz (local.get $k)))))
        (local.set $hi (i32.or (i32.shl (local.get $nb) (i32.const 9))
          (i32.shl (i32.sub (i32.shl (local.get $k) (local.get $nb)) (i32.shl (i32.const 1) (local.get $precision)))
            (i32.const 13))))
        (local.set $c (i32.const 0))
        (loop $sym
          (i32.store (i32.add (local.get $tab) (i32.shl (local.get $t) (i32.const 2)))
            (i32.or (i32.load (i32.add (local.get $bytes) (i32.shl (local.get $c) (i32.const 2)))) (local.get $hi)))
          (local.set $t (i32.add (local.get $t) (i32.const 1)))
          (local.set $c (i32.add (local.get $c) (i32.const 1)))
          (br_if $sym (i32.lt_u (local.get $c) (local.get $n))))
        (local.set $from (i32.add (local.get $from) (i32.const 1)))
        (br $group)))
    (local.get $t))

  ;; One alphabet's table into $tab (2^precision entries), from its $R runs of equal
  ;; frequency at $runs (run r's first symbol at $runs + 4 r, its count at + 64, its
  ;; frequency at + 128; its next group is kept at + 192) and its symbols' bytes at $bytes.
  ;; The filler (the first run of the largest frequency) fills the gaps between the other
  ;; runs' groups, merged by key (2i + 1) / g, compared exactly as integers (below 2^26).
  ;; Its input comes from the header's q0 alone (1 .. 65535), never from the payload: the
  ;; runs' frequencies times their counts sum to 2^precision, so it writes exactly the
  ;; table's positions (the tests check its tables against the TypeScript build's), and
  ;; WebAssembly's own bounds would make any other store a trap, never a write elsewhere.
  (func (export "spread") (param $tab i32) (param $precision i32) (param $bytes i32) (param $runs i32) (param $R i32)
    (local $filler i32) (local $F i32) (local $fbytes i32) (local $fn i32) (local $r i32)
    (local $t i32) (local $filled i32) (local $best i32) (local $bi i32) (local $bg i32)
    (local $i i32) (local $g i32) (local $d i32) (local $to i32)
    (local $k i32) (local $nb i32) (local $hi i32) (local $p i32) (local $pend i32)
    (local.set $r (i32.const 1))
    (block $b
      (loop $l
        (br_if $b (i32.ge_u (local.get $r) (local.get $R)))
        (if (i32.gt_u (i32.load offset=128 (i32.add (local.get $runs) (i32.shl (local.get $r) (i32.const 2))))
                      (i32.load offset=128 (i32.add (local.get $runs) (i32.shl (local.get $filler) (i32.const 2)))))
          (then (local.set $filler (local.get $r))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $l)))
    (local.set $F (i32.load offset=128 (i32.add (local.get $runs) (i32.shl (local.get $filler) (i32.const 2)))))
    (local.set $fbytes (i32.add (local.get $bytes)
      (i32.shl (i32.load (i32.add (local.get $runs) (i32.shl (local.get $filler) (i32.const 2)))) (i32.const 2))))
    (local.set $fn (i32.load offset=64 (i32.add (local.get $runs) (i32.shl (local.get $filler) (i32.const 2)))))
    ;; next group of each run: 0, the filler's F (its own count is $filled)
    (local.set $r (i32.const 0))
    (block $b
      (loop $l
        (br_if $b (i32.ge_u (local.get $r) (local.get $R)))
        (i32.store offset=192 (i32.add (local.get $runs) (i32.shl (local.get $r) (i32.const 2)))
          (select (local.get $F) (i32.const 0) (i32.eq (local.get $r) (local.get $filler))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $l)))
    (block $end
      (loop $step
        ;; the smallest key among the other runs: (2i + 1) / g below (2 bi + 1) / bg when
        ;; (2i + 1) bg < (2 bi + 1) g; strict, so that a tie goes to the earlier run
        (local.set $best (i32.const -1))
        (local.set $bi (i32.const 0))
        (local.set $bg (i32.const 1))
        (local.set $r (i32.const 0))
        (block $b
          (loop $l
            (br_if $b (i32.ge_u (local.get $r) (local.get $R)))
            (local.set $i (i32.load offset=192 (i32.add (local.get $runs) (i32.shl (local.get $r) (i32.const 2)))))
            (local.set $g (i32.load offset=128 (i32.add (local.get $runs) (i32.shl (local.get $r) (i32.const 2)))))
            (if (i32.lt_u (local.get $i) (local.get $g))
              (then
                (if (i32.or (i32.lt_s (local.get $best) (i32.const 0))
                      (i32.lt_u (i32.mul (i32.add (i32.shl (local.get $i) (i32.const 1)) (i32.const 1)) (local.get $bg))
                                (i32.mul (i32.add (i32.shl (local.get $bi) (i32.const 1)) (i32.const 1)) (local.get $g))))
                  (then
                    (local.set $best (local.get $r))
                    (local.set $bi (local.get $i))
                    (local.set $bg (local.get $g))))))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (br $l)))
        (br_if $end (i32.lt_s (local.get $best) (i32.const 0)))
        ;; the filler's groups j before it: (2j + 1) bg < (2 bi + 1) F, or equal with the
        ;; filler the earlier run
        (local.set $d (i32.add (i32.mul (i32.add (i32.shl (local.get $bi) (i32.const 1)) (i32.const 1)) (local.get $F))
          (i32.lt_u (local.get $filler) (local.get $best))))
        (local.set $to (local.get $filled))
        (block $b
          (loop $l
            (br_if $b (i32.ge_u (local.get $to) (local.get $F)))
            (br_if $b (i32.ge_u (i32.mul (i32.add (i32.shl (local.get $to) (i32.const 1)) (i32.const 1)) (local.get $bg))
              (local.get $d)))
            (local.set $to (i32.add (local.get $to) (i32.const 1)))
            (br $l)))
        (if (i32.gt_u (local.get $to) (local.get $filled))
          (then
            (local.set $t (call $groups (local.get $tab) (local.get $t) (local.get $filled) (local.get $to) (local.get $F)
              (local.get $precision) (local.get $fbytes) (local.get $fn)))
            (local.set $filled (local.get $to))))
        ;; then the group bi of run best: its state k = bg + bi, its n bytes from $p
        (local.set $k (i32.add (local.get $bg) (local.get $bi)))
        (local.set $nb (i32.sub (local.get $precision) (i32.sub (i32.const 31) (i32.clz (local.get $k)))))
        (local.set $hi (i32.or (i32.shl (local.get $nb) (i32.const 9))
          (i32.shl (i32.sub (i32.shl (local.get $k) (local.get $nb)) (i32.shl (i32.const 1) (local.get $precision)))
            (i32.const 13))))
        (local.set $p (i32.add (local.get $bytes)
          (i32.shl (i32.load (i32.add (local.get $runs) (i32.shl (local.get $best) (i32.const 2)))) (i32.const 2))))
        (local.set $pend (i32.add (local.get $p)
          (i32.shl (i32.load offset=64 (i32.add (local.get $runs) (i32.shl (local.get $best) (i32.const 2)))) (i32.const 2))))
        (loop $sym
          (i32.store (i32.add (local.get $tab) (i32.shl (local.get $t) (i32.const 2)))
            (i32.or (i32.load (local.get $p)) (local.get $hi)))
          (local.set $t (i32.add (local.get $t) (i32.const 1)))
          (local.set $p (i32.add (local.get $p) (i32.const 4)))
          (br_if $sym (i32.lt_u (local.get $p) (local.get $pend))))
        (i32.store offset=192 (i32.add (local.get $runs) (i32.shl (local.get $best) (i32.const 2)))
          (i32.add (local.get $bi) (i32.const 1)))
        (br $step)))
    (drop (call $groups (local.get $tab) (local.get $t) (local.get $filled) (local.get $F) (local.get $F)
      (local.get $precision) (local.get $fbytes) (local.get $fn))))
)
