//! A global allocator that counts, per thread, the bytes in use and their peak, and a
//! [`Meter`](bloomwire::fuzzing::Meter)-like measurement built on it. Per thread, so that
//! tests running in parallel in the same binary do not see each other's allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Instant;

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
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // The new block counted before the old one is freed: a copying realloc's peak.
            add(new_size as isize);
            add(-(layout.size() as isize));
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Run `f` and return its result with the peak heap bytes this thread had in use above
/// what it had before, and the nanoseconds it took.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize, u64) {
    let before = IN_USE.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let start = Instant::now();
    let out = f();
    let nanos = start.elapsed().as_nanos() as u64;
    let peak = PEAK.with(Cell::get);
    (out, (peak - before).max(0) as usize, nanos)
}
