//! What bloomwire's tests, benchmarks, examples and fuzz targets share, so that each is
//! written once:
//!
//! * [`SplitMix64`] and [`mix64`]: splitmix64 (Steele, Lea and Flood), a fixed-seed source
//!   of keys and random choices, so that every run checks the same cases;
//! * [`CountingAllocator`] and [`peak_during`]: a global allocator that counts, per thread,
//!   the heap bytes in use and their peak, for the tests and fuzz checks that bound a
//!   decoder's memory;
//! * [`thread_cpu_nanos`]: the CPU time of the calling thread, which other load on the
//!   machine does not inflate, for timing bounds and benchmarks.
//!
//! The allocator is only a type: a test binary that measures heap installs it with
//!
//! ```text
//! #[global_allocator]
//! static ALLOCATOR: bloomwire_testkit::CountingAllocator = bloomwire_testkit::CountingAllocator;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Instant;

/// The splitmix64 increment (the golden ratio in 64 bits).
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64's output function: a bijective mix of the 64 bits of `z`.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Advance a splitmix64 `state` and return its next output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GAMMA);
    mix64(*state)
}

/// A splitmix64 generator; the field is its state, the seed when it is made.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }

    /// The next output as an 8-byte key (little-endian).
    pub fn next_key(&mut self) -> [u8; 8] {
        self.next_u64().to_le_bytes()
    }

    /// A value below `n` (by remainder; `n` must not be 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The system allocator, counting per thread the bytes in use and their peak. Per thread,
/// so that tests running in parallel in the same binary do not see each other's
/// allocations (libFuzzer runs its inputs on one thread).
pub struct CountingAllocator;

thread_local! {
    static IN_USE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(delta: isize) {
    let _ = IN_USE.try_with(|u| {
        let now = u.get() + delta;
        u.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

// SAFETY: every call is forwarded unchanged to `System`; the counters only observe.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, which is `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and `new_size` is the caller's valid size.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // The new block counted before the old one is freed: a copying realloc's peak.
            add(new_size as isize);
            add(-(layout.size() as isize));
        }
        p
    }
}

/// Run `f` and return its result with the peak heap bytes this thread had in use above
/// what it had before, and the wall-clock nanoseconds it took. Counts only when
/// [`CountingAllocator`] is the global allocator (0 otherwise).
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize, u64) {
    let before = IN_USE.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let start = Instant::now();
    let out = f();
    let nanos = start.elapsed().as_nanos() as u64;
    let peak = PEAK.with(Cell::get);
    (out, (peak - before).max(0) as usize, nanos)
}

/// CPU time the calling thread has used, in nanoseconds
/// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`).
pub fn thread_cpu_nanos() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `ts` is; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Minor page faults of the calling thread so far (`getrusage(RUSAGE_THREAD)`): fresh
/// memory the kernel had to map.
pub fn thread_minor_faults() -> u64 {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct getrusage fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage, which `usage` is; the target is a constant.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_THREAD)");
    usage.ru_minflt as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_outputs() {
        // The first outputs for seed 0 of the reference implementation.
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(mix64(GAMMA), 0xE220_A839_7B1D_CDAF);
    }
}
