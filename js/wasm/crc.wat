;; CRC-32C (spec 2.4) by slicing by 8, for the package's checksum of large frames. Memory
;; (written by src/crc32c.ts): the eight tables at 0 (8 x 256 x i32: table s at 1024 s, as
;; crc32c.ts builds them), two results of crc3 at 8192, the bytes from 8208.
;; crc continues the register $c (without the final XOR) over $len bytes and returns it.
(module
  (import "env" "memory" (memory 1))
  (func (export "crc") (param $c i32) (param $at i32) (param $len i32) (result i32)
    (local $end i32) (local $end8 i32) (local $a i32) (local $b i32)
    (local.set $end (i32.add (local.get $at) (local.get $len)))
    (local.set $end8 (i32.add (local.get $at) (i32.and (local.get $len) (i32.const -8))))
    (block $done8
      (loop $step8
        (br_if $done8 (i32.ge_u (local.get $at) (local.get $end8)))
        (local.set $a (i32.xor (local.get $c) (i32.load (local.get $at))))
        (local.set $b (i32.load offset=4 (local.get $at)))
        (local.set $c
          (i32.xor
            (i32.xor
              (i32.xor
                (i32.load offset=7168 (i32.shl (i32.and (local.get $a) (i32.const 255)) (i32.const 2)))
                (i32.load offset=6144 (i32.shl (i32.and (i32.shr_u (local.get $a) (i32.const 8)) (i32.const 255)) (i32.const 2))))
              (i32.xor
                (i32.load offset=5120 (i32.shl (i32.and (i32.shr_u (local.get $a) (i32.const 16)) (i32.const 255)) (i32.const 2)))
                (i32.load offset=4096 (i32.shl (i32.shr_u (local.get $a) (i32.const 24)) (i32.const 2)))))
            (i32.xor
              (i32.xor
                (i32.load offset=3072 (i32.shl (i32.and (local.get $b) (i32.const 255)) (i32.const 2)))
                (i32.load offset=2048 (i32.shl (i32.and (i32.shr_u (local.get $b) (i32.const 8)) (i32.const 255)) (i32.const 2))))
              (i32.xor
                (i32.load offset=1024 (i32.shl (i32.and (i32.shr_u (local.get $b) (i32.const 16)) (i32.const 255)) (i32.const 2)))
                (i32.load (i32.shl (i32.shr_u (local.get $b) (i32.const 24)) (i32.const 2)))))))
        (local.set $at (i32.add (local.get $at) (i32.const 8)))
        (br $step8)))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $c
          (i32.xor
            (i32.load (i32.shl (i32.and (i32.xor (local.get $c) (i32.load8_u (local.get $at))) (i32.const 255)) (i32.const 2)))
            (i32.shr_u (local.get $c) (i32.const 8))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $step)))
    (local.get $c))
  ;; Three registers over three pieces of $L bytes each ($L a multiple of 8, the pieces
  ;; at $at, $at + $L, $at + 2 $L) at once, the first continuing $c, the others from 0:
  ;; three independent chains of table loads. Returns the first; the others at 8192
  ;; and 8196 (the caller joins them by advancing over zeros, crc32cZeros).
  (func (export "crc3") (param $c i32) (param $at i32) (param $L i32) (result i32)
    (local $end i32) (local $a i32) (local $b i32) (local $a1 i32) (local $b1 i32) (local $c1 i32)
    (local $a2 i32) (local $b2 i32) (local $c2 i32) (local $q1 i32) (local $q2 i32)
    (local.set $end (i32.add (local.get $at) (local.get $L)))
    (block $done
      (loop $step8
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $q1 (i32.add (local.get $at) (local.get $L)))
        (local.set $q2 (i32.add (local.get $q1) (local.get $L)))
        (local.set $a (i32.xor (local.get $c) (i32.load offset=0 (local.get $at))))
        (local.set $c
          (i32.xor
            (i32.xor
              (i32.xor
                (i32.load offset=7168 (i32.shl (i32.and (local.get $a) (i32.const 255)) (i32.const 2)))
                (i32.load offset=6144 (i32.shl (i32.and (i32.shr_u (local.get $a) (i32.const 8)) (i32.const 255)) (i32.const 2))))
              (i32.xor
                (i32.load offset=5120 (i32.shl (i32.and (i32.shr_u (local.get $a) (i32.const 16)) (i32.const 255)) (i32.const 2)))
                (i32.load offset=4096 (i32.shl (i32.shr_u (local.get $a) (i32.const 24)) (i32.const 2)))))
            (i32.xor
              (i32.xor
                (i32.load offset=3072 (i32.shl (i32.load8_u offset=4 (local.get $at)) (i32.const 2)))
                (i32.load offset=2048 (i32.shl (i32.load8_u offset=5 (local.get $at)) (i32.const 2))))
              (i32.xor
                (i32.load offset=1024 (i32.shl (i32.load8_u offset=6 (local.get $at)) (i32.const 2)))
                (i32.load (i32.shl (i32.load8_u offset=7 (local.get $at)) (i32.const 2)))))))
        (local.set $a1 (i32.xor (local.get $c1) (i32.load offset=0 (local.get $q1))))
        (local.set $c1
          (i32.xor
            (i32.xor
              (i32.xor
                (i32.load offset=7168 (i32.shl (i32.and (local.get $a1) (i32.const 255)) (i32.const 2)))
                (i32.load offset=6144 (i32.shl (i32.and (i32.shr_u (local.get $a1) (i32.const 8)) (i32.const 255)) (i32.const 2))))
              (i32.xor
                (i32.load offset=5120 (i32.shl (i32.and (i32.shr_u (local.get $a1) (i32.const 16)) (i32.const 255)) (i32.const 2)))
                (i32.load offset=4096 (i32.shl (i32.shr_u (local.get $a1) (i32.const 24)) (i32.const 2)))))
            (i32.xor
              (i32.xor
                (i32.load offset=3072 (i32.shl (i32.load8_u offset=4 (local.get $q1)) (i32.const 2)))
                (i32.load offset=2048 (i32.shl (i32.load8_u offset=5 (local.get $q1)) (i32.const 2))))
              (i32.xor
                (i32.load offset=1024 (i32.shl (i32.load8_u offset=6 (local.get $q1)) (i32.const 2)))
                (i32.load (i32.shl (i32.load8_u offset=7 (local.get $q1)) (i32.const 2)))))))
        (local.set $a2 (i32.xor (local.get $c2) (i32.load offset=0 (local.get $q2))))
        (local.set $c2
          (i32.xor
            (i32.xor
              (i32.xor
                (i32.load offset=7168 (i32.shl (i32.and (local.get $a2) (i32.const 255)) (i32.const 2)))
                (i32.load offset=6144 (i32.shl (i32.and (i32.shr_u (local.get $a2) (i32.const 8)) (i32.const 255)) (i32.const 2))))
              (i32.xor
                (i32.load offset=5120 (i32.shl (i32.and (i32.shr_u (local.get $a2) (i32.const 16)) (i32.const 255)) (i32.const 2)))
                (i32.load offset=4096 (i32.shl (i32.shr_u (local.get $a2) (i32.const 24)) (i32.const 2)))))
            (i32.xor
              (i32.xor
                (i32.load offset=3072 (i32.shl (i32.load8_u offset=4 (local.get $q2)) (i32.const 2)))
                (i32.load offset=2048 (i32.shl (i32.load8_u offset=5 (local.get $q2)) (i32.const 2))))
              (i32.xor
                (i32.load offset=1024 (i32.shl (i32.load8_u offset=6 (local.get $q2)) (i32.const 2)))
                (i32.load (i32.shl (i32.load8_u offset=7 (local.get $q2)) (i32.const 2)))))))
        (local.set $at (i32.add (local.get $at) (i32.const 8)))
        (br $step8)))
    (i32.store (i32.const 8192) (local.get $c1))
    (i32.store (i32.const 8196) (local.get $c2))
    (local.get $c))
)
