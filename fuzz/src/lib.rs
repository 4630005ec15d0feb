//! What the fuzz targets share: a global allocator that counts, and the [`Meter`] built on
//! it that `bloomwire::fuzzing` checks peak heap use and time with.
//!
//! libFuzzer runs one input at a time on one thread, so plain atomic counters measure
//! exactly what the code under test allocates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

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
        let start = Instant::now();
        f();
        let nanos = start.elapsed().as_nanos() as u64;
        let peak = PEAK.load(Relaxed);
        Some(Measured {
            peak_bytes: peak.saturating_sub(before),
            nanos,
        })
    }
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
