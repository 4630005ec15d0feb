//! What the fuzz targets share: a global allocator that counts, and the [`Meter`] built on
//! it that the checks of `bloomwire-fuzz-checks` (`fuzz/checks`) bound peak heap use and
//! time with.
//!
//! libFuzzer runs one input at a time on one thread, so the per-thread counts of
//! `bloomwire-testkit`'s allocator measure exactly what the code under test allocates. Time
//! is the thread's CPU time, not wall time: on a loaded machine a descheduled fuzzer must
//! not report a slow decoder.

use bloomwire_fuzz_checks::{Measured, Meter};
use bloomwire_testkit::{peak_during, thread_cpu_nanos, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Measures peak heap with [`CountingAllocator`] and the thread's CPU time.
pub struct CountingMeter;

/// The meter every target uses.
pub static METER: CountingMeter = CountingMeter;

impl Meter for CountingMeter {
    fn measure(&self, f: &mut dyn FnMut()) -> Option<Measured> {
        let start = thread_cpu_nanos();
        let ((), peak_bytes, _) = peak_during(f);
        let nanos = thread_cpu_nanos().saturating_sub(start);
        Some(Measured { peak_bytes, nanos })
    }
}

#[doc(hidden)]
pub use bloomwire_fuzz_checks as checks;
#[doc(hidden)]
pub use libfuzzer_sys;

/// A fuzz target that runs `bloomwire_fuzz_checks::$name` on each input with [`METER`].
#[macro_export]
macro_rules! target {
    ($name:ident) => {
        $crate::libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            $crate::checks::$name(data, &$crate::METER)
        });
    };
}
