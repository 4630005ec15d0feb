//! `bloomwire conform`: the library as an adapter of the conformance kit
//! (`spec/conformance/README.md`): JSON requests on stdin, one a line, each answered by one
//! line on stdout, through the library's public API only.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::str::FromStr;

use bloomwire::filter::counting::pack_counters;
use bloomwire::{
    decode, AnyFilter, BaseHash, BitArray, BitCoding, BloomFilter, Chunking, Coding, CounterCoding,
    CounterTable, CountingBloomFilter, Encoder, Error, Frame, FrameHeader, FrameKey, FrameKind,
    HashCount, HashFamily, IndexScheme, Layout, Limits, Message, PSource, Params, Profile,
    Receiver, Tag, Update, Verifier,
};
use serde_json::{json, Map, Value};

use crate::{parse_hex, to_hex, Failure, Result};

/// Serve the conformance kit's requests (spec/conformance/README.md) on stdin and stdout
/// until stdin ends: decode frames, write them, and run receivers, as the library does.
///
/// The kit's runner (`spec/conformance/run.py`) starts this command as its oracle, the
/// library's answers that other implementations are judged against. The global limits do
/// not apply: each request carries its own (null: the spec's recommended defaults).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The profile (spec 4.0) the adapter decodes and encodes: `full`, every coding of the
    /// registry, or `core`, UnsupportedCoding for the others.
    #[arg(long, default_value_t = Profile::Full)]
    profile: Profile,
}

/// Answer requests until stdin ends.
pub fn run(args: &Args) -> Result<()> {
    let mut adapter = Adapter {
        profile: args.profile,
        sessions: HashMap::new(),
    };
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| Failure::new(format!("reading stdin: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Value>(&line) {
            Ok(request) => adapter.answer(&request),
            Err(e) => bad_request(format!("not JSON: {e}")),
        };
        writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .map_err(|e| Failure::new(format!("writing stdout: {e}")))?;
    }
    Ok(())
}

/// The adapter's state: its profile and its receivers by session name.
struct Adapter {
    profile: Profile,
    sessions: HashMap<String, Receiver<AnyFilter>>,
}

/// A request that cannot be answered as asked: the answer to send instead.
type Answer<T> = std::result::Result<T, Value>;

impl Adapter {
    fn answer(&mut self, request: &Value) -> Value {
        let result = match request.get("op").and_then(Value::as_str) {
            Some("hello") => Ok(self.hello()),
            Some("decode") => decode_op(request, self.profile),
            Some("encode") => encode_op(request, self.profile),
            Some("open") => self.open(request),
            Some("receive") => self.receive(request),
            Some(_) => Err(json!({"ok": false, "error": "UnsupportedOp"})),
            None => Err(bad_request("no op")),
        };
        result.unwrap_or_else(|answer| answer)
    }

    /// `hello`: the profile, the ops, and the codings the encoder writes in the profile.
    fn hello(&self) -> Value {
        let codings: Vec<&str> = Coding::ALL
            .iter()
            .filter(|&&c| self.profile.includes(c))
            .map(|c| c.name())
            .collect();
        json!({
            "ok": true,
            "name": concat!("bloomwire ", env!("CARGO_PKG_VERSION")),
            "profile": self.profile.name(),
            "ops": ["decode", "receive", "encode"],
            "codings": codings,
        })
    }

    /// `open`: a receiver holding nothing, with the request's key and limits.
    fn open(&mut self, request: &Value) -> Answer<Value> {
        let name = session_name(request)?;
        let limits = limits_of(request)?.profile(self.profile);
        let mut receiver = Receiver::<AnyFilter>::with_limits(limits);
        if let Some(key) = key_of(request)? {
            receiver = receiver.with_key(key);
        }
        self.sessions.insert(name, receiver);
        Ok(json!({"ok": true}))
    }

    /// `receive`: the frame given to the session's receiver, and what it holds afterwards.
    fn receive(&mut self, request: &Value) -> Answer<Value> {
        let name = session_name(request)?;
        let frame = hex_member(request, "frame")?;
        let receiver = self
            .sessions
            .get_mut(&name)
            .ok_or_else(|| bad_request(format!("session {name:?} was never opened")))?;
        let result = receiver.receive(&frame);
        let held = match (receiver.generation(), receiver.digest()) {
            (Some(generation), Some(digest)) => {
                json!({"generation": generation.to_string(), "digest": crc_hex(digest)})
            }
            _ => Value::Null,
        };
        Ok(match result {
            Ok(update) => json!({
                "ok": true,
                "update": if matches!(update, Update::Delta { .. }) { "delta" } else { "full" },
                "held": held,
            }),
            Err(e) => {
                let mut answer = error_answer(&e);
                answer["held"] = held;
                answer
            }
        })
    }
}

/// `decode`: the header members and the digest of what the frame decodes to, or the error.
fn decode_op(request: &Value, profile: Profile) -> Answer<Value> {
    let frame = hex_member(request, "frame")?;
    let limits = limits_of(request)?.profile(profile);
    let decoded: bloomwire::Result<Message> = match key_of(request)? {
        Some(key) => decode(&frame, &Verifier::new(key, limits)),
        None => decode(&frame, &limits),
    };
    let message = match decoded {
        Ok(message) => message,
        Err(e) => return Ok(error_answer(&e)),
    };
    let digest = match &message {
        Message::Full(d) => d.filter.bits().digest(),
        Message::Delta(d) => d.xor.digest(),
        Message::Counting(d) => d.filter.digest(),
        Message::CountingDelta(d) => {
            let width = d.header.counter_width.unwrap_or(8);
            crc32c::crc32c(&pack_counters(&d.xor, width))
        }
        other => {
            return Err(bad_request(format!(
                "a message of no known kind: {other:?}"
            )))
        }
    };
    Ok(json!({
        "ok": true,
        "header": header_json(message.header()),
        "digest": crc_hex(digest),
    }))
}

/// The members of the protocol's `HEADER` (README section 2, `decode`).
fn header_json(h: &FrameHeader) -> Value {
    let params = &h.params;
    let (seed, k0, k1) = match params.family().base {
        BaseHash::Xxh64 { seed } => (Some(seed), None, None),
        BaseHash::SipHash24 { k0, k1 } => (None, Some(k0), Some(k1)),
        _ => (None, None, None),
    };
    let k_raw: Vec<u32> = match params.layout() {
        Layout::Standard { k } | Layout::Partitioned { k } => vec![k.raw()],
        Layout::Blocks { ks } => ks.iter().map(|k| k.raw()).collect(),
    };
    let (base_generation, base_digest, result_digest) = match h.kind {
        FrameKind::Delta {
            base_generation,
            base_digest,
            result_digest,
        } => (
            Some(base_generation.to_string()),
            Some(crc_hex(base_digest)),
            Some(crc_hex(result_digest)),
        ),
        FrameKind::Full => (None, None, None),
    };
    let tagged = h.tag != Tag::Absent;
    let flags = u8::from(h.chunk_shift.is_some())
        | u8::from(h.restart) << 1
        | u8::from(tagged) << 2
        | u8::from(h.metadata.is_some()) << 3;
    json!({
        "kind": h.kind.id(),
        "filter_type": h.filter_type(),
        "base_hash": params.family().base.id(),
        "index_scheme": params.family().scheme.id(),
        "coding": h.coding.id(),
        "flags": flags,
        "seed": seed.map(|s| s.to_string()),
        "k0": k0.map(|k| k.to_string()),
        "k1": k1.map(|k| k.to_string()),
        "m": params.m(),
        "counted_type": h.counter_width.map(|_| params.layout().id()),
        "counter_width": h.counter_width,
        "k_raw": k_raw,
        "n": h.n.to_string(),
        "generation": h.generation.to_string(),
        "base_generation": base_generation,
        "base_digest": base_digest,
        "result_digest": result_digest,
        "metadata": h.metadata.as_deref().map(to_hex),
        "q0": h.q0,
        "counter_table": h.counter_table.as_ref().map(|t| t.frequencies().to_vec()),
        "chunk_shift": h.chunk_shift,
        "header_len": h.header_len,
        "payload_len": h.payload_len,
        "tag": match h.tag {
            Tag::Absent => "absent",
            Tag::Unverified => "unverified",
            _ => "verified",
        },
    })
}

/// The answer for a refused frame: the spec's class (the error's name), with the field for
/// the two classes that name one.
fn error_answer(e: &Error) -> Value {
    let mut answer = Map::new();
    answer.insert("ok".into(), false.into());
    let field = match e {
        Error::InvalidField { field, .. } | Error::LimitExceeded { field, .. } => Some(*field),
        Error::Incomplete { needed } => {
            answer.insert("needed".into(), (*needed).into());
            None
        }
        _ => None,
    };
    answer.insert("error".into(), e.name().into());
    if let Some(field) = field {
        answer.insert("field".into(), field.into());
    }
    answer.insert("detail".into(), e.to_string().into());
    Value::Object(answer)
}

/// `encode`: the frame of the filter (or the delta from `base`) in the coding, q0 and chunk
/// shift asked, or `EncoderDeclined` where the library's encoder would write another.
fn encode_op(request: &Value, profile: Profile) -> Answer<Value> {
    let spec = request
        .get("filter")
        .filter(|f| f.is_object())
        .ok_or_else(|| bad_request("no filter"))?;
    let params = params_of(spec)?;
    let n = dec_member(spec, "n")?;
    let generation = dec_member(request, "generation")?;
    let restart = request
        .get("restart")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let coding = request.get("coding").and_then(Value::as_str);
    let q0 = match request.get("q0") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|q| u16::try_from(q).ok())
                .ok_or_else(|| bad_request("q0: not a number of 16 bits"))?,
        ),
    };
    let (chunking, shift) = match request.get("chunk_shift") {
        None | Some(Value::Null) => (Chunking::Never, None),
        Some(Value::String(s)) if s == "auto" => (Chunking::Auto, None),
        Some(v) => {
            let s = v
                .as_u64()
                .and_then(|s| u8::try_from(s).ok())
                .ok_or_else(|| bad_request("chunk_shift: a number, \"auto\" or null"))?;
            (Chunking::Shift(s), Some(s))
        }
    };
    let metadata = opt_hex_member(request, "metadata")?;
    let key = key_of(request)?;
    let base = request.get("base").filter(|b| !b.is_null());
    if let Some(name) = coding {
        match Coding::from_str(name) {
            Ok(c) if profile.includes(c) => {}
            _ => return Ok(unsupported(name)),
        }
    }

    let frame = if let Some(width) = spec.get("counter_width").and_then(Value::as_u64) {
        let width = u8::try_from(width).map_err(|_| bad_request("counter_width"))?;
        let counting = |value: &Value, n: u64| -> Answer<CountingBloomFilter> {
            let counters = hex_member(value, "counters")?;
            CountingBloomFilter::from_counters(params.clone(), width, counters, n)
                .map_err(|e| bad_request(format!("counters: {e}")))
        };
        let filter = counting(request, n)?;
        let mut encoder = Encoder::<CountingBloomFilter>::new()
            .profile(profile)
            .p_source(q0_source(q0));
        if let Some(name) = coding {
            match CounterCoding::from_str(name) {
                Ok(c) => encoder = encoder.coding(c),
                Err(_) => return Ok(unsupported(name)),
            }
        }
        if let Some(table) = request.get("counter_table").filter(|t| !t.is_null()) {
            let frequencies = table
                .as_array()
                .and_then(|t| t.iter().map(|f| f.as_u64()?.try_into().ok()).collect())
                .ok_or_else(|| bad_request("counter_table: a list of numbers"))?;
            let table = CounterTable::new(frequencies, width)
                .map_err(|e| bad_request(format!("counter_table: {e}")))?;
            encoder = encoder.counter_table(table);
        }
        let encoder = finish(encoder, metadata, key);
        encode_filter(&encoder, &filter, base, counting, generation)?
    } else {
        let bloom = |value: &Value, n: u64| -> Answer<BloomFilter> {
            let bytes = hex_member(value, "bits")?;
            let bits = BitArray::from_bytes(&bytes, params.m())
                .map_err(|e| bad_request(format!("bits: {e}")))?;
            BloomFilter::from_parts(params.clone(), bits, n)
                .map_err(|e| bad_request(format!("bits: {e}")))
        };
        let filter = bloom(request, n)?;
        let mut encoder = Encoder::new()
            .profile(profile)
            .p_source(q0_source(q0))
            .chunking(chunking)
            .threads(1);
        if let Some(name) = coding {
            match BitCoding::from_str(name) {
                Ok(c) => encoder = encoder.coding(c),
                Err(_) => return Ok(unsupported(name)),
            }
        }
        let encoder = finish(encoder, metadata, key);
        encode_filter(&encoder, &filter, base, bloom, generation)?
    };
    let frame = frame.and_then(|f| if restart { f.with_restart(true) } else { Ok(f) });
    let frame = match frame {
        Ok(frame) => frame,
        Err(e) => return Ok(declined(e.to_string())),
    };
    if let Some(why) = not_as_asked(&frame, coding, q0, shift) {
        return Ok(declined(why));
    }
    Ok(json!({"ok": true, "frame": to_hex(&frame.to_bytes())}))
}

/// Why the library's frame is not the one asked for, if it is not: the encoder fell back
/// to another coding, or did not chunk, or wrote another q0.
fn not_as_asked(
    frame: &Frame,
    coding: Option<&str>,
    q0: Option<u16>,
    shift: Option<u8>,
) -> Option<String> {
    let header = frame.header();
    if let Some(name) = coding {
        if header.coding.name() != name {
            return Some(format!("the encoder writes {} instead", header.coding));
        }
    }
    if q0.is_some() && header.coding.has_q0() && header.q0 != q0 {
        return Some(format!("the encoder writes q0 {:?} instead", header.q0));
    }
    if shift.is_some() && header.chunk_shift != shift {
        return Some(format!(
            "the encoder writes chunk shift {:?}",
            header.chunk_shift
        ));
    }
    None
}

fn q0_source(q0: Option<u16>) -> PSource {
    q0.map_or(PSource::Measured, PSource::Fixed)
}

/// The frame of `filter` as generation `generation`, or, when the request has a `base`,
/// the delta to it from the base's filter (`of` reads a filter from the request's members).
fn encode_filter<F: bloomwire::Filter>(
    encoder: &Encoder<F>,
    filter: &F,
    base: Option<&Value>,
    of: impl Fn(&Value, u64) -> Answer<F>,
    generation: u64,
) -> Answer<bloomwire::Result<Frame>> {
    Ok(match base {
        Some(b) => {
            encoder.encode_delta(&of(b, 0)?, dec_member(b, "generation")?, filter, generation)
        }
        None => encoder.encode_generation(filter, generation),
    })
}

fn finish<F: bloomwire::Filter>(
    mut encoder: Encoder<F>,
    metadata: Option<Vec<u8>>,
    key: Option<FrameKey>,
) -> Encoder<F> {
    if let Some(metadata) = metadata {
        encoder = encoder.metadata(metadata);
    }
    if let Some(key) = key {
        encoder = encoder.key(key);
    }
    encoder
}

/// A filter's parameters from the protocol's `FILTER`.
fn params_of(spec: &Value) -> Answer<Params> {
    let number = |name: &str| {
        spec.get(name)
            .and_then(Value::as_u64)
            .ok_or_else(|| bad_request(format!("filter.{name}: a number")))
    };
    let base = match number("base_hash")? {
        0 => BaseHash::Opaque,
        1 => BaseHash::Xxh64 {
            seed: dec_member(spec, "seed")?,
        },
        2 => BaseHash::SipHash24 {
            k0: dec_member(spec, "k0")?,
            k1: dec_member(spec, "k1")?,
        },
        other => return Err(bad_request(format!("filter.base_hash {other}"))),
    };
    let scheme = u8::try_from(number("index_scheme")?)
        .ok()
        .and_then(IndexScheme::from_id)
        .ok_or_else(|| bad_request("filter.index_scheme"))?;
    let k_raw: Vec<u32> = spec
        .get("k_raw")
        .and_then(Value::as_array)
        .and_then(|ks| ks.iter().map(|k| k.as_u64()?.try_into().ok()).collect())
        .ok_or_else(|| bad_request("filter.k_raw: a list of numbers"))?;
    let layout_id = match number("filter_type")? {
        3 => number("counted_type")?,
        t => t,
    };
    let k = |raw: u32| HashCount::from_raw(raw).map_err(|e| bad_request(format!("k: {e}")));
    let layout = match (layout_id, k_raw.as_slice()) {
        (0, &[raw]) => Layout::Standard { k: k(raw)? },
        (1, &[raw]) => Layout::Partitioned { k: k(raw)? },
        (2, ks) => Layout::Blocks {
            ks: ks
                .iter()
                .map(|&raw| HashCount::from_raw_allow_zero(raw))
                .collect::<bloomwire::Result<_>>()
                .map_err(|e| bad_request(format!("k: {e}")))?,
        },
        _ => return Err(bad_request("filter: layout and k_raw do not fit")),
    };
    Params::new(number("m")?, layout, HashFamily::new(base, scheme))
        .map_err(|e| bad_request(format!("filter: {e}")))
}

/// The request's `limits`, or the spec's recommended ones.
fn limits_of(request: &Value) -> Answer<Limits> {
    let Some(limits) = request.get("limits").filter(|l| !l.is_null()) else {
        return Ok(Limits::default());
    };
    let number = |name: &str| {
        limits
            .get(name)
            .and_then(Value::as_u64)
            .ok_or_else(|| bad_request(format!("limits.{name}: a number")))
    };
    let max_k = u32::try_from(number("max_k")?).map_err(|_| bad_request("limits.max_k"))?;
    let mut out = Limits::new()
        .max_m(number("max_m")?)
        .max_k(max_k)
        .max_payload(number("max_payload")?)
        .max_metadata(number("max_metadata")?);
    if let Some(bytes) = limits.get("max_filter_bytes").and_then(Value::as_u64) {
        out = out.max_filter_bytes(bytes);
    }
    Ok(out)
}

fn key_of(request: &Value) -> Answer<Option<FrameKey>> {
    opt_hex_member(request, "key")?
        .map(|bytes| {
            FrameKey::try_from(bytes.as_slice()).map_err(|e| bad_request(format!("key: {e}")))
        })
        .transpose()
}

fn session_name(request: &Value) -> Answer<String> {
    request
        .get("session")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| bad_request("session: a string"))
}

fn hex_member(value: &Value, name: &str) -> Answer<Vec<u8>> {
    opt_hex_member(value, name)?.ok_or_else(|| bad_request(format!("{name}: hex bytes")))
}

fn opt_hex_member(value: &Value, name: &str) -> Answer<Option<Vec<u8>>> {
    match value.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => parse_hex(s)
            .map(Some)
            .ok_or_else(|| bad_request(format!("{name}: not hexadecimal"))),
        Some(_) => Err(bad_request(format!("{name}: hex bytes"))),
    }
}

/// A 64-bit integer written as a decimal string.
fn dec_member(value: &Value, name: &str) -> Answer<u64> {
    value
        .get(name)
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad_request(format!("{name}: a decimal string")))
}

fn crc_hex(crc: u32) -> String {
    format!("{crc:08x}")
}

fn bad_request(detail: impl Into<String>) -> Value {
    json!({"ok": false, "error": "BadRequest", "detail": detail.into()})
}

fn declined(detail: impl Into<String>) -> Value {
    json!({"ok": false, "error": "EncoderDeclined", "detail": detail.into()})
}

fn unsupported(name: &str) -> Value {
    json!({"ok": false, "error": "UnsupportedCoding", "detail": format!("no coding {name:?}")})
}
