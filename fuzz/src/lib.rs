//! What the fuzz targets share: a global allocator that counts, and the [`Meter`] built on
//! it that `bloomwire::fuzzing` checks peak heap use and time with.
//!
//! libFuzzer runs one input at a time on one thread, so plain atomic counters measure
//! exactly what the code under test allocates. Time is the thread's CPU time, not wall
//! time: on a loaded machine a descheduled fuzzer must not report a slow decoder.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use bloomwire::fuzzing::{Measured, Meter};

/// The system allocator, counting the bytes in use and their peak.
pub struct CountingAllocator;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`; the counters only observe.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        IN_USE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            // Counted as the new block allocated before the old one is freed, which is
            // the worst case a copying realloc reaches.
            grow(new_size);
            IN_USE.fetch_sub(layout.size(), Relaxed);
        }
        p
    }
}

fn grow(size: usize) {
    let now = IN_USE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(now, Relaxed);
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Measures peak heap and wall-clock time with [`CountingAllocator`].
pub struct CountingMeter;

/// The meter every target uses.
pub static METER: CountingMeter = CountingMeter;

impl Meter for CountingMeter {
    fn measure(&self, f: &mut dyn FnMut()) -> Option<Measured> {
        let before = IN_USE.load(Relaxed);
        PEAK.store(before, Relaxed);
        let start = thread_cpu_nanos();
        f();
        let nanos = thread_cpu_nanos().saturating_sub(start);
        let peak = PEAK.load(Relaxed);
        Some(Measured {
            peak_bytes: peak.saturating_sub(before),
            nanos,
        })
    }
}

/// CPU time this thread has used, in nanoseconds.
fn thread_cpu_nanos() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write to; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[doc(hidden)]
pub use libfuzzer_sys;

/// A fuzz target that runs `bloomwire::fuzzing::$name` on each input with [`METER`].
#[macro_export]
macro_rules! target {
    ($name:ident) => {
        $crate::libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            bloomwire::fuzzing::$name(data, &$crate::METER)
        });
    };
}
