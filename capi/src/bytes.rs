//! Output bytes: into the caller's buffer, the length needed reported when it is too small,
//! or into a buffer the library allocates and `bw_bytes_free` frees.

use crate::error::{guard_void, Fail};
use crate::ptr::Out;

/// Where a call puts the bytes it makes.
pub(crate) enum Sink {
    /// The caller's buffer of `cap` bytes (NULL allowed when `cap` is 0), and where the
    /// length goes.
    Caller {
        buf: *mut u8,
        cap: usize,
        len: Out<usize>,
    },
    /// A buffer the library allocates, and where its pointer and length go.
    Library { ptr: Out<*mut u8>, len: Out<usize> },
}

impl Sink {
    /// The caller's buffer `buf` of `cap` bytes, its length to `*len`.
    ///
    /// # Safety
    ///
    /// `buf` is NULL or points to `cap` writable bytes; `len` is NULL or points to a
    /// writable `size_t`.
    pub(crate) unsafe fn caller(buf: *mut u8, cap: usize, len: *mut usize) -> Result<Sink, Fail> {
        // SAFETY: the caller's guarantee, passed on.
        let len = unsafe { Out::new(len, "len") }?;
        len.put(0);
        if buf.is_null() && cap != 0 {
            return Err(Fail::null("buf (with a capacity that is not 0)"));
        }
        if cap > isize::MAX as usize {
            return Err(Fail::arg(format!("capacity {cap} overflows")));
        }
        Ok(Sink::Caller { buf, cap, len })
    }

    /// A buffer the library allocates: its pointer to `*out` (NULL until success), its
    /// length to `*len`.
    ///
    /// # Safety
    ///
    /// `out` and `len` are NULL or point to a writable `uint8_t *` and `size_t`.
    pub(crate) unsafe fn library(out: *mut *mut u8, len: *mut usize) -> Result<Sink, Fail> {
        // SAFETY: the caller's guarantee, passed on.
        let (ptr, len) = unsafe { (Out::new(out, "out")?, Out::new(len, "len")?) };
        ptr.put(core::ptr::null_mut());
        len.put(0);
        Ok(Sink::Library { ptr, len })
    }

    /// Deliver `bytes`: copied into the caller's buffer (or `BW_ERR_BUFFER_TOO_SMALL` with
    /// the length needed in `*len`), or into a new buffer of the library's.
    pub(crate) fn deliver(&self, bytes: &[u8]) -> Result<(), Fail> {
        match self {
            Sink::Caller { buf, cap, len } => {
                len.put(bytes.len());
                if bytes.len() > *cap {
                    return Err(Fail::too_small(bytes.len(), *cap));
                }
                if !bytes.is_empty() {
                    // SAFETY: `buf` is not NULL (cap >= len > 0, and a NULL buf was
                    // refused unless cap is 0), holds `cap >= bytes.len()` writable bytes
                    // by the caller's guarantee, and cannot overlap `bytes`, which the
                    // library owns.
                    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), *buf, bytes.len()) };
                }
                Ok(())
            }
            Sink::Library { ptr, len } => {
                // malloc(0) may return NULL: ask for one byte at least.
                // SAFETY: malloc has no precondition; its result is checked below.
                let p = unsafe { libc::malloc(bytes.len().max(1)) }.cast::<u8>();
                if p.is_null() {
                    return Err(bloomwire::Error::AllocationFailed {
                        bytes: bytes.len() as u64,
                    }
                    .into());
                }
                // SAFETY: `p` is a fresh allocation of at least `bytes.len()` bytes.
                unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
                ptr.put(p);
                len.put(bytes.len());
                Ok(())
            }
        }
    }
}

/// `void bw_bytes_free(uint8_t *bytes)`: free a buffer the library allocated
/// (`bw_encode_alloc`); NULL does nothing.
///
/// # Safety
///
/// `bytes` is NULL or a buffer from the library not yet freed.
#[no_mangle]
pub unsafe extern "C" fn bw_bytes_free(bytes: *mut u8) {
    guard_void(|| {
        // SAFETY: by the caller's guarantee NULL or a live buffer of the library's, which
        // it allocated with malloc.
        unsafe { libc::free(bytes.cast()) }
    });
}
