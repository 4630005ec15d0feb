//! Columns of keys read in place: Arrow arrays through the Arrow C data interface (the
//! `__arrow_c_array__` and `__arrow_c_stream__` PyCapsule protocol of pyarrow, polars,
//! nanoarrow and others) and NumPy arrays through the array interface
//! (`__array_interface__`).
//!
//! The one module of the package with `unsafe`: both protocols hand over raw pointers to
//! memory that the exporting object owns, and the stable ABI the package is built for
//! (abi3, Python 3.9) has no buffer protocol. Every pointer is turned into a slice here,
//! once, with its length known from the protocol, and kept no longer than the object (or
//! capsule) that owns the memory; the rest of the package sees only [`Column`], a view of
//! byte slices that is `Send` and is read with the GIL released.
//!
//! What a value's key is (the same bytes a scalar insert of the value hashes):
//!
//! * Arrow `string`, `large_string`, `string_view`: the value's UTF-8 bytes; `binary`,
//!   `large_binary`, `binary_view`, `fixed_size_binary`: its bytes;
//! * Arrow and NumPy integers (`int8` to `uint64`): the value's little-endian two's
//!   complement bytes at the column's width (`int64` 5 is `(5).to_bytes(8, "little",
//!   signed=True)`);
//! * NumPy `S` (fixed-width bytes): the value as NumPy returns it, without the trailing NUL
//!   bytes that pad it to the width (`a[i]`);
//! * an Arrow null is no key: inserts skip it and queries answer False for it.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::NonNull;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};

// ---------------------------------------------------------------------------------------------
// The view

/// Where a column came from, which decides the type of a query's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An Arrow array or stream of arrays.
    Arrow,
    /// A NumPy array.
    NumPy,
}

/// The values of a column, as byte slices of its buffers.
#[derive(Debug, Clone)]
enum Values<'a> {
    /// Variable-length values: `offsets` holds the `len + 1` offsets of the column's values
    /// (already past the array's offset), `width` bytes each (4 or 8), checked to be
    /// non-decreasing from 0 and within `data`.
    Var {
        offsets: &'a [u8],
        width: usize,
        data: &'a [u8],
    },
    /// Fixed-width values: value i is `data[i * stride..][..width]`, without trailing NUL
    /// bytes when `strip_nul` (NumPy's `S` dtype).
    Fixed {
        width: usize,
        stride: usize,
        data: &'a [u8],
        strip_nul: bool,
    },
    /// Arrow's views (`string_view`, `binary_view`): 16 bytes a value (already past the
    /// array's offset), a value of at most 12 bytes inline, a longer one in one of `data`
    /// (checked to be there when the column was made, for every value that is not null).
    Views {
        views: &'a [u8],
        data: Vec<&'a [u8]>,
    },
}

/// A column of keys: byte slices into memory its exporter owns, valid while the caller of
/// [`for_each_chunk`]'s function runs.
#[derive(Debug, Clone)]
pub struct Column<'a> {
    values: Values<'a>,
    /// The validity bitmap (bit `offset + i` clear: value i is null) and that bit offset.
    validity: Option<(&'a [u8], usize)>,
    len: usize,
}

impl<'a> Column<'a> {
    /// Number of values, nulls included.
    pub fn len(&self) -> usize {
        self.len
    }

    fn is_valid(&self, i: usize) -> bool {
        match self.validity {
            None => true,
            Some((bits, offset)) => {
                let bit = offset + i;
                bits[bit / 8] >> (bit % 8) & 1 == 1
            }
        }
    }

    fn value(&self, i: usize) -> &'a [u8] {
        match &self.values {
            Values::Views { views, data } => {
                let view = View::at(views, i);
                match view.long {
                    None => &views[i * VIEW_LEN + 4..][..view.len],
                    Some((buffer, offset)) => &data[buffer][offset..offset + view.len],
                }
            }
            &Values::Var {
                offsets,
                width,
                data,
            } => {
                let start = read_offset(offsets, width, i);
                let end = read_offset(offsets, width, i + 1);
                &data[start..end]
            }
            &Values::Fixed {
                width,
                stride,
                data,
                strip_nul,
            } => {
                let v = &data[i * stride..i * stride + width];
                if strip_nul {
                    let end = v.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                    &v[..end]
                } else {
                    v
                }
            }
        }
    }

    /// Each value's key, None for a null.
    pub fn keys(&self) -> impl Iterator<Item = Option<&'a [u8]>> + '_ {
        (0..self.len).map(move |i| self.is_valid(i).then(|| self.value(i)))
    }

    /// The keys of the values that are not null.
    pub fn present(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.keys().flatten()
    }
}

/// Bytes of an Arrow view.
const VIEW_LEN: usize = 16;

/// An Arrow view: the value's length and, for one longer than 12 bytes, the data buffer
/// and offset where it is.
struct View {
    len: usize,
    long: Option<(usize, usize)>,
}

impl View {
    /// View `i` of `views` (its fields not checked against the buffers).
    fn at(views: &[u8], i: usize) -> View {
        let v = &views[i * VIEW_LEN..(i + 1) * VIEW_LEN];
        let field = |at: usize| i32::from_ne_bytes(v[at..at + 4].try_into().expect("4 bytes"));
        // A negative length or index is a malformed view: read as a huge one, it fails the
        // checks of `check_views`.
        let len = field(0) as u32 as usize;
        let long = (len > 12).then(|| (field(8) as u32 as usize, field(12) as u32 as usize));
        View { len, long }
    }
}

/// The views of the values that are not null, checked: a long value within its buffer.
fn check_views(column: &Column<'_>, views: &[u8], sizes: &[u64]) -> PyResult<()> {
    for i in (0..column.len).filter(|&i| column.is_valid(i)) {
        let view = View::at(views, i);
        if let Some((buffer, offset)) = view.long {
            let within = sizes
                .get(buffer)
                .is_some_and(|&size| (offset as u64).saturating_add(view.len as u64) <= size);
            if !within {
                return Err(PyValueError::new_err(format!(
                    "malformed Arrow array: view {i} points past its data buffer"
                )));
            }
        }
    }
    Ok(())
}

/// Offset `i` of a column's offsets (checked when the column was made).
fn read_offset(offsets: &[u8], width: usize, i: usize) -> usize {
    let b = &offsets[i * width..(i + 1) * width];
    if width == 4 {
        i32::from_ne_bytes(b.try_into().expect("4 bytes")) as usize
    } else {
        i64::from_ne_bytes(b.try_into().expect("8 bytes")) as usize
    }
}

/// The offsets of a variable-length column, checked: every one at least 0 and at least the
/// one before. Returns the last (the bytes of data the values span).
fn check_offsets(offsets: &[u8], width: usize) -> PyResult<usize> {
    let mut last: i64 = 0;
    for (i, b) in offsets.chunks_exact(width).enumerate() {
        let o = if width == 4 {
            i64::from(i32::from_ne_bytes(b.try_into().expect("4 bytes")))
        } else {
            i64::from_ne_bytes(b.try_into().expect("8 bytes"))
        };
        if o < 0 || (i > 0 && o < last) {
            return Err(PyValueError::new_err(format!(
                "malformed Arrow array: offset {i} is {o}, after {last}"
            )));
        }
        last = o;
    }
    usize::try_from(last)
        .map_err(|_| PyValueError::new_err("malformed Arrow array: offsets beyond memory"))
}

/// Call `f` on each chunk of `obj`'s keys, in order: an Arrow array (one chunk), an Arrow
/// stream such as a chunked array (one chunk per array), or a one-dimensional NumPy array
/// (one chunk). Returns where the column came from.
pub fn for_each_chunk(
    obj: &Bound<'_, PyAny>,
    mut f: impl FnMut(Column<'_>) -> PyResult<()>,
) -> PyResult<Source> {
    if obj.hasattr("__arrow_c_array__")? {
        arrow_array(obj, &mut f)?;
        Ok(Source::Arrow)
    } else if obj.hasattr("__arrow_c_stream__")? {
        arrow_stream(obj, &mut f)?;
        Ok(Source::Arrow)
    } else if obj.hasattr("__array_interface__")? {
        numpy_array(obj, &mut f)?;
        Ok(Source::NumPy)
    } else {
        let ty = obj.get_type().name()?;
        Err(PyTypeError::new_err(format!(
            "a column of keys is an Arrow array or chunked array (anything with \
             __arrow_c_array__ or __arrow_c_stream__) or a NumPy array, not {ty}; use \
             insert_many for an iterable"
        )))
    }
}

// ---------------------------------------------------------------------------------------------
// Arrow: the C data interface (https://arrow.apache.org/docs/format/CDataInterface.html)

#[repr(C)]
struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

#[repr(C)]
struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

#[repr(C)]
struct ArrowArrayStream {
    get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    private_data: *mut c_void,
}

/// The layout of a column's Arrow type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Variable-length values with offsets of this many bytes.
    Var(usize),
    /// Values of this many bytes (fixed-size binary, integers).
    Fixed(usize),
    /// Views into variadic data buffers (string_view, binary_view).
    Views,
}

/// The layout of an Arrow format string, or why it is not a column of keys.
fn layout_of(format: &str) -> PyResult<Layout> {
    Ok(match format {
        "vu" | "vz" => Layout::Views,
        "u" | "z" => Layout::Var(4),
        "U" | "Z" => Layout::Var(8),
        "c" | "C" => Layout::Fixed(1),
        "s" | "S" => Layout::Fixed(2),
        "i" | "I" => Layout::Fixed(4),
        "l" | "L" => Layout::Fixed(8),
        _ => {
            if let Some(width) = format.strip_prefix("w:") {
                let width = width.parse::<usize>().map_err(|_| {
                    PyValueError::new_err(format!("malformed Arrow format {format:?}"))
                })?;
                return Ok(Layout::Fixed(width));
            }
            return Err(PyTypeError::new_err(format!(
                "an Arrow column of keys is string, large_string, string_view, binary, \
                 large_binary, binary_view, fixed_size_binary or an integer type (int8 to \
                 uint64), not the type of format {format:?}; cast it first (dictionaries: \
                 dictionary_decode())"
            )));
        }
    })
}

fn integer_layout_supported(format: &str) -> PyResult<()> {
    let integer = matches!(format, "c" | "C" | "s" | "S" | "i" | "I" | "l" | "L");
    if integer && cfg!(target_endian = "big") {
        return Err(PyTypeError::new_err(
            "integer columns are read as little-endian bytes, and this machine is big-endian",
        ));
    }
    Ok(())
}

/// The layout of a schema: its format checked, no dictionary.
///
/// # Safety
///
/// `schema` points to a valid, not yet released `ArrowSchema` (the C data interface's
/// contract for an exported schema).
unsafe fn schema_layout(schema: *const ArrowSchema) -> PyResult<Layout> {
    // SAFETY: the caller's contract; `format` is a NUL-terminated string the schema owns.
    let (format, dictionary) = unsafe {
        let s = &*schema;
        if s.format.is_null() {
            return Err(PyValueError::new_err("malformed Arrow schema: no format"));
        }
        (CStr::from_ptr(s.format).to_string_lossy(), s.dictionary)
    };
    if !dictionary.is_null() {
        return Err(PyTypeError::new_err(
            "a dictionary-encoded Arrow column: decode it first (dictionary_decode())",
        ));
    }
    integer_layout_supported(&format)?;
    layout_of(&format)
}

/// The column an Arrow array holds.
///
/// # Safety
///
/// `array` points to a valid, not yet released `ArrowArray` of the layout `layout`, whose
/// buffers stay valid and unchanged for `'a` (the C data interface's contract: the memory
/// lives until the array is released, and the consumer does not write to it).
unsafe fn arrow_column<'a>(array: *const ArrowArray, layout: Layout) -> PyResult<Column<'a>> {
    // SAFETY: the caller's contract.
    let a = unsafe { &*array };
    let (len, offset) = match (usize::try_from(a.length), usize::try_from(a.offset)) {
        (Ok(len), Ok(offset)) => (len, offset),
        _ => {
            return Err(PyValueError::new_err(
                "malformed Arrow array: negative length or offset",
            ))
        }
    };
    let buffers_wanted = match layout {
        Layout::Var(_) => 3,
        Layout::Fixed(_) => 2,
        // Validity, views, the variadic data buffers, and their sizes.
        Layout::Views => a.n_buffers.max(3),
    };
    if a.n_buffers != buffers_wanted || a.buffers.is_null() {
        return Err(PyValueError::new_err(format!(
            "malformed Arrow array: {} buffers, expected {buffers_wanted}",
            a.n_buffers
        )));
    }
    // SAFETY: `buffers` holds `n_buffers` pointers (checked above).
    let buffer = |i: usize| -> *const u8 { unsafe { *a.buffers.add(i) as *const u8 } };
    let end = offset
        .checked_add(len)
        .ok_or_else(|| PyValueError::new_err("malformed Arrow array: length overflows"))?;
    // The validity bitmap: absent when no value is null.
    let validity = if a.null_count == 0 || buffer(0).is_null() {
        None
    } else {
        // SAFETY: a validity bitmap holds at least `offset + length` bits.
        Some((unsafe { slice(buffer(0), end.div_ceil(8)) }?, offset))
    };
    let values = match layout {
        Layout::Views => {
            // SAFETY: a views buffer holds `offset + length` views of 16 bytes.
            let all = unsafe { slice(buffer(1), bytes_for(end, VIEW_LEN)?) }?;
            let views = &all[offset * VIEW_LEN..];
            let count = buffers_wanted as usize - 3;
            // SAFETY: the last buffer holds the sizes of the `count` data buffers, as int64.
            let sizes_bytes = unsafe { slice(buffer(count + 2), bytes_for(count, 8)?) }?;
            let sizes: Vec<u64> = sizes_bytes
                .chunks_exact(8)
                .map(|b| i64::from_ne_bytes(b.try_into().expect("8 bytes")).max(0) as u64)
                .collect();
            let data = (0..count)
                .map(|j| {
                    let size = usize::try_from(sizes[j]).map_err(|_| {
                        PyValueError::new_err("malformed Arrow array: a buffer beyond memory")
                    })?;
                    // SAFETY: data buffer j holds the `sizes[j]` bytes the sizes buffer says.
                    unsafe { slice(buffer(j + 2), size) }
                })
                .collect::<PyResult<Vec<_>>>()?;
            let column = Column {
                values: Values::Views {
                    views,
                    data: Vec::new(),
                },
                validity,
                len,
            };
            check_views(&column, views, &sizes)?;
            Values::Views { views, data }
        }
        Layout::Var(width) => {
            // SAFETY: an offsets buffer holds `offset + length + 1` offsets of `width` bytes.
            let all = unsafe { slice(buffer(1), bytes_for(end + 1, width)?) }?;
            let offsets = &all[offset * width..];
            let data_len = check_offsets(offsets, width)?;
            // SAFETY: the data buffer holds at least the bytes the last offset reaches
            // (the offsets, checked to be non-decreasing, all point into it).
            let data = unsafe { slice(buffer(2), data_len) }?;
            Values::Var {
                offsets,
                width,
                data,
            }
        }
        Layout::Fixed(width) => {
            // SAFETY: a fixed-width values buffer holds `offset + length` values.
            let all = unsafe { slice(buffer(1), bytes_for(end, width)?) }?;
            Values::Fixed {
                width,
                stride: width,
                data: &all[offset * width..],
                strip_nul: false,
            }
        }
    };
    Ok(Column {
        values,
        validity,
        len,
    })
}

/// Bytes of `count` values of `width` bytes.
fn bytes_for(count: usize, width: usize) -> PyResult<usize> {
    count
        .checked_mul(width)
        .ok_or_else(|| PyValueError::new_err("malformed Arrow array: its length overflows"))
}

/// `len` bytes at `ptr`, or an empty slice when `len` is 0 (whatever `ptr` is: exporters
/// may pass null for empty buffers). A null pointer with a length is a malformed export.
///
/// # Safety
///
/// When `len > 0` and `ptr` is not null, `ptr` points to `len` readable bytes that stay
/// valid and unchanged for `'a`.
unsafe fn slice<'a>(ptr: *const u8, len: usize) -> PyResult<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(PyValueError::new_err(
            "malformed array export: a null buffer for values",
        ));
    }
    // SAFETY: the caller's contract; `len > 0` and `ptr` is not null.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The pointer a capsule of the Arrow PyCapsule interface holds, checked by name.
fn capsule_pointer(capsule: &Bound<'_, PyAny>, name: &CStr) -> PyResult<NonNull<c_void>> {
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        PyTypeError::new_err(format!(
            "the Arrow export did not return a capsule named {name:?}"
        ))
    })?;
    capsule.pointer_checked(Some(name))
}

fn arrow_array(
    obj: &Bound<'_, PyAny>,
    f: &mut impl FnMut(Column<'_>) -> PyResult<()>,
) -> PyResult<()> {
    let exported = obj.call_method0("__arrow_c_array__")?;
    let pair = exported.cast::<PyTuple>()?;
    if pair.len() != 2 {
        return Err(PyTypeError::new_err(
            "__arrow_c_array__ returned no (schema, array) pair",
        ));
    }
    let (schema, array) = (pair.get_item(0)?, pair.get_item(1)?);
    let schema = capsule_pointer(&schema, c"arrow_schema")?.cast::<ArrowSchema>();
    let array = capsule_pointer(&array, c"arrow_array")?.cast::<ArrowArray>();
    // SAFETY: the capsules hold an exported schema and array (the PyCapsule interface's
    // contract); they are released by the capsules' destructors, and `pair` keeps both
    // capsules alive until this function returns, after `f`.
    let column = unsafe {
        let layout = schema_layout(schema.as_ptr())?;
        arrow_column(array.as_ptr(), layout)?
    };
    f(column)
}

/// An exported schema this module owns: released when dropped.
struct OwnedSchema(ArrowSchema);

impl Drop for OwnedSchema {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: the schema was exported to us and not released yet.
            unsafe { release(&mut self.0) }
        }
    }
}

/// An exported array this module owns: released when dropped.
struct OwnedArray(ArrowArray);

impl Drop for OwnedArray {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: the array was exported to us and not released yet.
            unsafe { release(&mut self.0) }
        }
    }
}

fn empty_schema() -> ArrowSchema {
    ArrowSchema {
        format: std::ptr::null(),
        name: std::ptr::null(),
        metadata: std::ptr::null(),
        flags: 0,
        n_children: 0,
        children: std::ptr::null_mut(),
        dictionary: std::ptr::null_mut(),
        release: None,
        private_data: std::ptr::null_mut(),
    }
}

fn empty_array() -> ArrowArray {
    ArrowArray {
        length: 0,
        null_count: 0,
        offset: 0,
        n_buffers: 0,
        n_children: 0,
        buffers: std::ptr::null_mut(),
        children: std::ptr::null_mut(),
        dictionary: std::ptr::null_mut(),
        release: None,
        private_data: std::ptr::null_mut(),
    }
}

/// The error a stream reports, with its message when it has one.
///
/// # Safety
///
/// `stream` points to a valid, not yet released stream.
unsafe fn stream_error(stream: *mut ArrowArrayStream, code: c_int) -> PyErr {
    // SAFETY: the caller's contract; the message, if any, is valid until the next call.
    let message = unsafe {
        (*stream)
            .get_last_error
            .map(|get| get(stream))
            .filter(|p| !p.is_null())
            .map(|p| CStr::from_ptr(p).to_string_lossy().into_owned())
    };
    PyValueError::new_err(format!(
        "the Arrow stream failed (error {code}): {}",
        message.as_deref().unwrap_or("no message")
    ))
}

fn arrow_stream(
    obj: &Bound<'_, PyAny>,
    f: &mut impl FnMut(Column<'_>) -> PyResult<()>,
) -> PyResult<()> {
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let stream = capsule_pointer(&capsule, c"arrow_array_stream")?
        .cast::<ArrowArrayStream>()
        .as_ptr();
    // SAFETY: the capsule holds an exported stream (the PyCapsule interface's contract),
    // released by the capsule's destructor; `capsule` lives until this function returns.
    // The stream's callbacks are called as the C stream interface allows (from one thread
    // at a time, with the GIL held here), and every schema and array they export is owned
    // by an `OwnedSchema` or `OwnedArray`, released when dropped.
    unsafe {
        let (Some(get_schema), Some(get_next)) = ((*stream).get_schema, (*stream).get_next) else {
            return Err(PyValueError::new_err(
                "the Arrow stream was already released",
            ));
        };
        let mut schema = OwnedSchema(empty_schema());
        let code = get_schema(stream, &mut schema.0);
        if code != 0 {
            return Err(stream_error(stream, code));
        }
        let layout = schema_layout(&schema.0)?;
        loop {
            let mut array = OwnedArray(empty_array());
            let code = get_next(stream, &mut array.0);
            if code != 0 {
                return Err(stream_error(stream, code));
            }
            if array.0.release.is_none() {
                return Ok(()); // the end of the stream
            }
            f(arrow_column(&array.0, layout)?)?;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// NumPy: the array interface (https://numpy.org/doc/stable/reference/arrays.interface.html)

/// What the array interface says of a one-dimensional NumPy array: its type string's byte
/// order, kind and width, its length and stride, and the memory its elements span.
struct NumpyView<'a> {
    typestr: String,
    order: char,
    kind: char,
    width: Option<usize>,
    len: usize,
    stride: Option<usize>,
    data: Option<&'a [u8]>,
}

/// The view of a NumPy array (a `numpy.ndarray`, read through NumPy's own
/// `__array_interface__`; any other object with one is refused), checked: one dimension, no
/// mask, non-negative strides, its data a pointer. `data` is None until the
/// caller knows the element width (`with_data`).
fn numpy_view<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<(NumpyView<'a>, Bound<'a, PyDict>)> {
    let module = obj.get_type().module()?;
    if module.to_cow()?.starts_with("numpy.ma") {
        return Err(PyTypeError::new_err(
            "a masked array: pass a.compressed() (the values that are not masked)",
        ));
    }
    // The data pointer is read from the interface, so only NumPy's own is trusted: an
    // object that merely has `__array_interface__` (or an ndarray subclass that overrides
    // it) could name any address. NumPy computes its arrays' interface from their buffer.
    let ndarray = obj.py().import("numpy")?.getattr("ndarray")?;
    if !obj.is_instance(&ndarray)? {
        return Err(PyTypeError::new_err(
            "an object with __array_interface__ that is not a numpy.ndarray: its data \
             pointer cannot be checked (pass a numpy.ndarray, an Arrow array or a buffer)",
        ));
    }
    let interface = ndarray
        .getattr("__array_interface__")?
        .call_method1("__get__", (obj,))?;
    let interface = interface.cast_into::<PyDict>()?;
    if interface.get_item("mask")?.is_some_and(|m| !m.is_none()) {
        return Err(PyTypeError::new_err(
            "an array with a mask is not supported",
        ));
    }
    let item = |name: &str| -> PyResult<Bound<'_, PyAny>> {
        interface
            .get_item(name)?
            .ok_or_else(|| PyValueError::new_err(format!("__array_interface__ has no {name:?}")))
    };
    let shape: Vec<usize> = item("shape")?.extract()?;
    let [len] = shape[..] else {
        return Err(PyValueError::new_err(format!(
            "a column is one-dimensional, not of shape {shape:?}"
        )));
    };
    let typestr: String = item("typestr")?.extract()?;
    let (order, kind, width) = parse_typestr(&typestr);
    let stride = match interface.get_item("strides")? {
        Some(s) if !s.is_none() => {
            let strides: Vec<isize> = s.extract()?;
            match strides[..] {
                [s] if s >= 0 => Some(s as usize),
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "strides {strides:?} are not supported: pass numpy.ascontiguousarray(a)"
                    )))
                }
            }
        }
        _ => None,
    };
    Ok((
        NumpyView {
            typestr,
            order,
            kind,
            width,
            len,
            stride,
            data: None,
        },
        interface,
    ))
}

impl<'a> NumpyView<'a> {
    /// The view with its data: `len` elements of `width` bytes, `stride` bytes apart
    /// (`width` when the array gave no strides).
    ///
    /// The array (`obj`, or what owns its memory) must stay alive and unchanged while the
    /// data is read: the caller keeps it for the view's lifetime.
    fn with_data(mut self, interface: &Bound<'_, PyDict>, width: usize) -> PyResult<Self> {
        let stride = *self.stride.get_or_insert(width);
        let data = interface
            .get_item("data")?
            .ok_or_else(|| PyValueError::new_err("__array_interface__ has no \"data\""))?;
        let Ok(data) = data.cast::<PyTuple>() else {
            return Err(PyTypeError::new_err(
                "an array whose data is not a pointer: pass numpy.ascontiguousarray(a)",
            ));
        };
        let address: usize = data.get_item(0)?.extract()?;
        let span = if self.len == 0 {
            0
        } else {
            (self.len - 1)
                .checked_mul(stride)
                .and_then(|s| s.checked_add(width))
                .ok_or_else(|| PyValueError::new_err("the array's extent overflows"))?
        };
        // SAFETY: the array interface's contract: `address` is the array's first element
        // and the `len` elements `stride` bytes apart, `width` bytes each, are readable
        // memory that the array owns. The caller keeps the array alive while the view is
        // read, and must not write to it meanwhile (it is read with the GIL released, as
        // with the buffer protocol).
        self.data = Some(unsafe { slice(address as *const u8, span) }?);
        Ok(self)
    }
}

fn little_endian(order: char) -> bool {
    order == '<' || order == '|' || (order == '=' && cfg!(target_endian = "little"))
}

fn numpy_array(
    obj: &Bound<'_, PyAny>,
    f: &mut impl FnMut(Column<'_>) -> PyResult<()>,
) -> PyResult<()> {
    let (view, interface) = numpy_view(obj)?;
    let (width, strip_nul) = match (view.kind, view.width) {
        ('i' | 'u', Some(w @ (1 | 2 | 4 | 8))) => {
            if !little_endian(view.order) {
                return Err(PyTypeError::new_err(format!(
                    "a big-endian integer array ({}): convert it with \
                     a.astype(a.dtype.newbyteorder('<'))",
                    view.typestr
                )));
            }
            (w, false)
        }
        ('S', Some(w)) => (w, true),
        _ => {
            return Err(PyTypeError::new_err(format!(
                "a NumPy column of keys has an integer dtype (int8 to uint64) or a bytes \
                 dtype (S), not {}; str arrays: pyarrow.array(a) or \
                 numpy.char.encode(a, 'utf-8')",
                view.typestr
            )))
        }
    };
    let view = view.with_data(&interface, width)?;
    let (len, stride) = (view.len, view.stride.unwrap_or(width));
    f(Column {
        values: Values::Fixed {
            width,
            stride,
            data: view.data.unwrap_or(&[]),
            strip_nul,
        },
        validity: None,
        len,
    })
}

// ---------------------------------------------------------------------------------------------
// Positions: NumPy arrays of bit positions

/// A NumPy array of non-negative integers (bit positions), read in place: `Send`, read
/// with the GIL released while its array lives.
#[derive(Debug, Clone, Copy)]
pub struct Positions<'a> {
    data: &'a [u8],
    width: usize,
    stride: usize,
    len: usize,
}

impl<'a> Positions<'a> {
    /// Number of positions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Each position, in order.
    pub fn values(&self) -> impl Iterator<Item = u64> + Clone + 'a {
        let Positions {
            data,
            width,
            stride,
            len,
        } = *self;
        (0..len).map(move |i| {
            let mut b = [0u8; 8];
            b[..width].copy_from_slice(&data[i * stride..i * stride + width]);
            u64::from_le_bytes(b)
        })
    }
}

/// Call `f` with the positions a NumPy integer array holds (any width, little-endian;
/// signed arrays checked to hold no negative value). `obj` must have
/// `__array_interface__`.
pub fn numpy_positions<T>(
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(Positions<'_>) -> PyResult<T>,
) -> PyResult<T> {
    let (view, interface) = numpy_view(obj)?;
    let (signed, width) = match (view.kind, view.width) {
        ('i', Some(w @ (1 | 2 | 4 | 8))) => (true, w),
        ('u', Some(w @ (1 | 2 | 4 | 8))) => (false, w),
        _ => {
            return Err(PyTypeError::new_err(format!(
                "bit positions are an integer array (uint64, or any integer dtype), not {}",
                view.typestr
            )))
        }
    };
    if !little_endian(view.order) {
        return Err(PyTypeError::new_err(format!(
            "a big-endian integer array ({}): convert it with a.astype('<u8')",
            view.typestr
        )));
    }
    let view = view.with_data(&interface, width)?;
    let positions = Positions {
        data: view.data.unwrap_or(&[]),
        width,
        stride: view.stride.unwrap_or(width),
        len: view.len,
    };
    if signed {
        let sign = 1u64 << (8 * width - 1);
        if let Some(i) = positions.values().position(|v| v & sign != 0) {
            return Err(PyValueError::new_err(format!(
                "a negative bit position at index {i}"
            )));
        }
    }
    f(positions)
}

/// The byte order, kind and width of an array interface type string (`<i8`, `|S16`); `?`
/// and None for what is missing or not a number.
fn parse_typestr(typestr: &str) -> (char, char, Option<usize>) {
    let mut chars = typestr.chars();
    let order = chars.next().unwrap_or('?');
    let kind = chars.next().unwrap_or('?');
    (order, kind, chars.as_str().parse::<usize>().ok())
}
