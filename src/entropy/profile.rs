//! The registry's two columns beside a coding's id (spec §4.0): the profile a decoder must
//! implement to read it, and whether encoders still write it.

use crate::error::{invalid, Error, Result};

/// A set of codings a decoder implements (spec §4.0). Every conforming decoder implements
/// [`Profile::Core`]; [`Profile::Full`] is every coding of the registry, and every product of
/// this crate decodes it.
///
/// An [`Encoder`](crate::Encoder) restricted to a profile
/// ([`Encoder::profile`](crate::Encoder::profile)) writes only its codings, and a decoder
/// restricted to one ([`Limits::profile`](crate::Limits::profile)) answers
/// [`Error::UnsupportedCoding`] for the others. A sender that does not know what its
/// receivers implement sends [`Profile::Core`].
///
/// ```
/// use bloomwire::{Coding, Profile};
/// assert!(Profile::Core.includes(Coding::Positional));
/// assert!(!Profile::Core.includes(Coding::Wide));
/// assert!(Profile::Full.includes(Coding::Wide));
/// assert_eq!("core".parse::<Profile>().unwrap(), Profile::Core);
/// assert_eq!(Profile::default(), Profile::Full);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Profile {
    /// Raw (coding 0), the range coder's codings (1, 2, 4 and 5), positional (7) and chunked
    /// payloads: every kind of filter at its smallest within a few bytes, with one entropy
    /// coder and one gap coder to implement.
    Core,
    /// Every coding of the registry: Core and the codings made for decoding speed (3, 6, 9,
    /// 10 and 11).
    #[default]
    Full,
}

impl Profile {
    /// Every profile, smallest first.
    pub const ALL: [Profile; 2] = [Profile::Core, Profile::Full];

    /// Its name, as the spec, the program and the Python package write it; [`str::parse`]
    /// reads it back.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Core => "core",
            Profile::Full => "full",
        }
    }
}

/// The profile of a name (`"core"` or `"full"`); another name is
/// [`Error::InvalidParameter`].
impl core::str::FromStr for Profile {
    type Err = Error;

    fn from_str(s: &str) -> Result<Profile> {
        by_name(s, &Profile::ALL, Profile::name, "profile")
    }
}

/// Whether encoders write a coding (spec §4.0). Decoders read every coding of their profile
/// whatever its status: an id, once given, is read forever.
///
/// ```
/// use bloomwire::{Coding, Status};
/// assert_eq!(Coding::Adaptive.status(), Status::Deprecated);
/// assert_eq!(Coding::KnownP.status(), Status::Active);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    /// Written: the default encoder chooses it where it is the fastest to decode within the
    /// margin of the smallest frame.
    Active,
    /// Read, not written: a later coding does better what it did. The default encoder never
    /// chooses it; an encoder asked for it by name still writes it.
    Deprecated,
}

impl Status {
    /// Its name in the spec's registry.
    pub fn name(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Deprecated => "deprecated",
        }
    }
}

/// `Display` for the registry's enums (codings, profiles, statuses): their `name()`, as the
/// spec, the program and the Python package write them.
macro_rules! display_by_name {
    ($($t:ty),+) => {$(
        impl core::fmt::Display for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }
    )+};
}
pub(crate) use display_by_name;

display_by_name!(Profile, Status);

/// The one of `all` whose `name` is `s` (the `FromStr` of the registry's enums: codings and
/// profiles), or an [`Error::InvalidParameter`] for `what` listing the names.
pub(crate) fn by_name<C: Copy>(
    s: &str,
    all: &[C],
    name: impl Fn(C) -> &'static str,
    what: &'static str,
) -> Result<C> {
    all.iter().copied().find(|&c| name(c) == s).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|&c| name(c)).collect();
        invalid(what, format!("unknown {s:?}: one of {}", names.join(", ")))
    })
}
