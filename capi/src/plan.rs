//! `bw_optimizer` and `bw_plan`: m and k for a byte budget or a false positive target (the
//! library's `Optimizer`).

use core::ffi::c_char;
use std::ffi::CString;

use bloomwire::optimizer::LayoutKind;
use bloomwire::{BaseHash, BitCoding, HashCount, HashFamily, IndexScheme, Layout};

use crate::error::{c_string, guard, guard_void, Fail};
use crate::limits::Limits;
use crate::ptr::{bytes_in, free_handle, handle, new_handle, str_in, Out, OutHandle};
use crate::setter::setters;
use crate::status::Status;

/// `BW_LAYOUT_STANDARD`: one array of m bits.
pub const LAYOUT_STANDARD: i32 = 0;
/// `BW_LAYOUT_PARTITIONED`: `ceil(k)` disjoint sub-arrays.
pub const LAYOUT_PARTITIONED: i32 = 1;
/// `BW_LAYOUT_BLOCKS`: power-of-two blocks from the binary digits of m.
pub const LAYOUT_BLOCKS: i32 = 2;

/// The `bw_layout` of a layout (its wire id).
pub(crate) fn layout_id(layout: &Layout) -> i32 {
    i32::from(layout.id())
}

/// The optimizer's settings (`bw_optimizer`).
#[derive(Debug, Clone, Default)]
pub struct Optimizer(bloomwire::Optimizer);

/// A plan (`bw_plan`): the filter's parameters and the figures expected.
#[derive(Debug, Clone)]
pub struct Plan {
    pub(crate) plan: bloomwire::Plan,
    coding: CString,
}

/// The figures of a plan (`bw_plan_info`).
#[repr(C)]
#[derive(Debug)]
pub struct PlanInfo {
    /// Keys planned for.
    pub n: u64,
    /// Bits of the filter.
    pub m: u64,
    /// Hash functions per key (for blocks, the sum of the `k_j`).
    pub k: f64,
    /// `ceil(k)`.
    pub k_ceil: u32,
    /// `bw_layout`.
    pub layout: i32,
    /// The coding the plan sized, by name (owned by the plan).
    pub coding: *const c_char,
    /// Expected false positive rate.
    pub false_positive_rate: f64,
    /// Expected frame bytes.
    pub expected_bytes: f64,
    /// Frame bytes exceeded with probability at most epsilon.
    pub worst_case_bytes: u64,
    /// Expected bits on the wire per key.
    pub bits_per_element: f64,
    /// The receiver's memory for the decoded filter, bytes.
    pub receiver_bytes: u64,
}

/// `bw_status bw_optimizer_new(bw_optimizer **out)`: the library's default settings.
///
/// # Safety
///
/// `out` is NULL or points to a writable `bw_optimizer *`.
#[no_mangle]
pub unsafe extern "C" fn bw_optimizer_new(out: *mut *mut Optimizer) -> Status {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { new_handle(out, || Ok(Optimizer::default())) }
}

setters! {
    /// `bw_status bw_optimizer_set_limits(bw_optimizer *o, const bw_limits *limits)`: plan
    /// within a receiver's limits (NULL: the defaults).
    ///
    /// # Safety
    ///
    /// `optimizer` is NULL or a live `bw_optimizer` no other call uses; `limits` NULL or a live
    /// `bw_limits`.
    fn bw_optimizer_set_limits(optimizer: *mut Optimizer, limits: *const Limits) |o| {
        // SAFETY: the caller's guarantee, passed on.
        let limits = unsafe { crate::limits::limits_or_default(limits) }?;
        o.0 = o.0.clone().limits(limits);
    }

    /// `bw_status bw_optimizer_set_layout(bw_optimizer *o, bw_layout layout)`.
    ///
    /// # Safety
    ///
    /// `optimizer` is NULL or a live `bw_optimizer` no other call uses.
    fn bw_optimizer_set_layout(optimizer: *mut Optimizer, layout: core::ffi::c_int) |o| {
        let kind = match layout {
            LAYOUT_STANDARD => LayoutKind::Standard,
            LAYOUT_PARTITIONED => LayoutKind::Partitioned,
            LAYOUT_BLOCKS => LayoutKind::Blocks,
            _ => return Err(Fail::arg(format!("layout {layout}: not a bw_layout"))),
        };
        o.0 = o.0.clone().layout(kind);
    }

    /// `bw_status bw_optimizer_set_seed(bw_optimizer *o, uint64_t seed)`: xxHash64 with this
    /// seed (the default family has seed 0).
    ///
    /// # Safety
    ///
    /// `optimizer` is NULL or a live `bw_optimizer` no other call uses.
    fn bw_optimizer_set_seed(optimizer: *mut Optimizer, seed: u64) |o| {
        let family = HashFamily::new(BaseHash::Xxh64 { seed }, IndexScheme::default());
        o.0 = o.0.clone().family(family);
    }

    /// `bw_status bw_optimizer_set_siphash_key(bw_optimizer *o, const uint8_t *key, size_t
    /// len)`: SipHash-2-4 keyed with 16 bytes.
    ///
    /// # Safety
    ///
    /// `optimizer` is NULL or a live `bw_optimizer` no other call uses; `key` NULL or `len`
    /// readable bytes.
    fn bw_optimizer_set_siphash_key(optimizer: *mut Optimizer, key: *const u8, len: usize) |o| {
        // SAFETY: the caller's guarantee, passed on.
        let bytes = unsafe { bytes_in(key, len, "key") }?;
        let key: [u8; 16] = bytes
            .try_into()
            .map_err(|_| Fail::arg(format!("a SipHash key has 16 bytes, not {len}")))?;
        let family = HashFamily::new(BaseHash::siphash(key), IndexScheme::default());
        o.0 = o.0.clone().family(family);
    }

    /// `bw_status bw_optimizer_set_k_range(bw_optimizer *o, uint32_t min_k, uint32_t max_k)`:
    /// the integer k tried (`min_k == max_k` fixes k).
    ///
    /// # Safety
    ///
    /// `optimizer` is NULL or a live `bw_optimizer` no other call uses.
    fn bw_optimizer_set_k_range(optimizer: *mut Optimizer, min_k: u32, max_k: u32) |o| {
        let (min_k, max_k) = (HashCount::new(min_k)?, HashCount::new(max_k)?);
        o.0 = o.0.clone().k_range(min_k, max_k);
    }

    /// `bw_status bw_optimizer_set_max_m(bw_optimizer *o, uint64_t max_m)`: the largest m
    /// planned for.
    ///
    /// # Safety
    ///
    /// `optimizer` is NULL or a live `bw_optimizer` no other call uses.
    fn bw_optimizer_set_max_m(optimizer: *mut Optimizer, max_m: u64) |o| {
        o.0 = o.0.clone().max_m(max_m);
    }

    /// `bw_status bw_optimizer_set_coding(bw_optimizer *o, const char *name)`: plan for this
    /// coding of bits (its name as the library parses it: `"raw"`, `"known-p"`, ...).
    ///
    /// # Safety
    ///
    /// `optimizer` is NULL or a live `bw_optimizer` no other call uses; `name` NULL or a
    /// NUL-terminated string.
    fn bw_optimizer_set_coding(optimizer: *mut Optimizer, name: *const c_char) |o| {
        // SAFETY: the caller's guarantee, passed on.
        let coding: BitCoding = unsafe { str_in(name, "name") }?.parse()?;
        o.0 = o.0.clone().coding(coding);
    }
}

/// `void bw_optimizer_free(bw_optimizer *o)`; NULL does nothing.
///
/// # Safety
///
/// `optimizer` is NULL or a live `bw_optimizer` no other call uses; not used again.
#[no_mangle]
pub unsafe extern "C" fn bw_optimizer_free(optimizer: *mut Optimizer) {
    // SAFETY: the caller's guarantee, passed on.
    guard_void(|| unsafe { free_handle(optimizer) });
}

/// Plan with the optimizer at `optimizer` (NULL: the defaults).
///
/// # Safety
///
/// `optimizer` is NULL or a live `bw_optimizer`; `out` NULL or a writable `bw_plan *`.
unsafe fn plan_with(
    optimizer: *const Optimizer,
    out: *mut *mut Plan,
    plan: impl FnOnce(&bloomwire::Optimizer) -> bloomwire::Result<bloomwire::Plan>,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let out = unsafe { OutHandle::new(out, "out") }?;
        let default = Optimizer::default();
        let optimizer = if optimizer.is_null() {
            &default
        } else {
            // SAFETY: the caller's guarantee, passed on.
            unsafe { handle(optimizer, "optimizer") }?
        };
        let plan = plan(&optimizer.0)?;
        let coding = c_string(plan.coding.to_string().as_str());
        out.put(Plan { plan, coding });
        Ok(())
    })
}

/// `bw_status bw_plan_for_budget(const bw_optimizer *o, uint64_t n, uint64_t budget_bytes,
/// bw_plan **out)`: the least false positive rate for n keys in frames of at most
/// `budget_bytes` (with probability 1 - epsilon).
///
/// # Safety
///
/// `optimizer` is NULL or a live `bw_optimizer`; `out` NULL or a writable `bw_plan *`.
#[no_mangle]
pub unsafe extern "C" fn bw_plan_for_budget(
    optimizer: *const Optimizer,
    n: u64,
    budget_bytes: u64,
    out: *mut *mut Plan,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { plan_with(optimizer, out, |o| o.plan(n, budget_bytes)) }
}

/// `bw_status bw_plan_for_rate(const bw_optimizer *o, uint64_t n, double target_fpr,
/// bw_plan **out)`: the smallest frames for n keys at a false positive rate of at most
/// `target_fpr`.
///
/// # Safety
///
/// `optimizer` is NULL or a live `bw_optimizer`; `out` NULL or a writable `bw_plan *`.
#[no_mangle]
pub unsafe extern "C" fn bw_plan_for_rate(
    optimizer: *const Optimizer,
    n: u64,
    target_fpr: f64,
    out: *mut *mut Plan,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { plan_with(optimizer, out, |o| o.plan_for_fpr(n, target_fpr)) }
}

/// `bw_status bw_plan_get(const bw_plan *plan, bw_plan_info *out)`: the plan's figures;
/// `out->coding` is owned by the plan.
///
/// # Safety
///
/// `plan` is NULL or a live `bw_plan`; `out` NULL or a writable `bw_plan_info`.
#[no_mangle]
pub unsafe extern "C" fn bw_plan_get(plan: *const Plan, out: *mut PlanInfo) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (plan, out) = unsafe { (handle(plan, "plan")?, Out::new(out, "out")?) };
        let p = &plan.plan;
        out.put(PlanInfo {
            n: p.n,
            m: p.m(),
            k: p.k().to_f64(),
            k_ceil: p.k().ceil(),
            layout: layout_id(p.layout()),
            coding: plan.coding.as_ptr(),
            false_positive_rate: p.false_positive_rate,
            expected_bytes: p.expected_bytes,
            worst_case_bytes: p.worst_case_bytes,
            bits_per_element: p.bits_per_element,
            receiver_bytes: p.receiver_bytes,
        });
        Ok(())
    })
}

/// `void bw_plan_free(bw_plan *plan)`; NULL does nothing.
///
/// # Safety
///
/// `plan` is NULL or a live `bw_plan` no other call uses; not used again.
#[no_mangle]
pub unsafe extern "C" fn bw_plan_free(plan: *mut Plan) {
    // SAFETY: the caller's guarantee, passed on.
    guard_void(|| unsafe { free_handle(plan) });
}
