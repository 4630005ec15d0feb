//! `bloomwire plan`: m and k for n keys, against the uncompressed filter, and the paper's
//! Figures 1 and 2.

use std::path::{Path, PathBuf};

use bloomwire::optimizer::FrontierPlan;
use bloomwire::BitCoding;
use bloomwire::{theory, Optimizer, Plan};
use clap::ValueEnum;
use plotters::prelude::*;
use serde_json::json;

use crate::options::ForceArg;
use crate::output::{check_output, write_stdout};
use crate::{limits, Context, Failure, Result};

/// Plan m and k for n keys: the lowest false positive rate within a byte budget, or the
/// fewest bytes for a false positive rate; compared with the best uncompressed filter.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("goal").required(true).args(["budget_bytes", "fpr"])))]
pub struct Args {
    /// Number of keys.
    #[arg(long)]
    n: u64,
    /// Frame bytes at most (header and checksum included).
    #[arg(long, value_name = "Z")]
    budget_bytes: Option<u64>,
    /// False positive rate at most.
    #[arg(long, value_name = "F")]
    fpr: Option<f64>,
    /// Largest m/n: the bits of memory a key of the decoded filter (not on the wire).
    #[arg(long, value_name = "R")]
    max_bits_per_element: Option<f64>,
    /// Largest memory of the decoded filter, `ceil(m/8)` bytes at the receiver (and the
    /// sender's bits; a sender with a counting filter holds 9 times it).
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<u64>,
    /// Also give the delta frames when this fraction of the keys (in (0, 1]) is replaced
    /// between generations.
    #[arg(long, value_name = "C")]
    churn: Option<f64>,
    /// Print the frontier of wire bytes against memory for --fpr: the memory-optimal plan
    /// (the standard uncompressed filter's m), the plans with at most 2 and 4 times its
    /// memory, and the plan without a memory cap.
    #[arg(long, requires = "fpr", conflicts_with_all = ["budget_bytes", "plot"])]
    frontier: bool,
    /// Whether k may be rational.
    #[arg(long, value_enum, default_value_t = KArg::Integer)]
    k: KArg,
    /// Plan for this coding only; `raw` plans an uncompressed filter of `ceil(m/8)` bytes
    /// [default: the smallest].
    #[arg(long, value_enum, value_name = "CODING")]
    coding: Option<PlanCodingArg>,
    /// Print one JSON object; n is a decimal string (like every value of the program's
    /// JSON that may exceed 2^53), the other values are numbers.
    #[arg(long)]
    json: bool,
    /// Draw the false positive rate against k for the plan's bits per element, compressed
    /// against uncompressed (the paper's Figures 1 and 2), as SVG.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    force: ForceArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum KArg {
    Integer,
    Rational,
}

/// The codings a plan can be made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PlanCodingArg {
    Raw,
    Adaptive,
    KnownP,
}

impl From<PlanCodingArg> for BitCoding {
    fn from(c: PlanCodingArg) -> Self {
        match c {
            PlanCodingArg::Raw => BitCoding::Raw,
            PlanCodingArg::Adaptive => BitCoding::Adaptive,
            PlanCodingArg::KnownP => BitCoding::KnownP,
        }
    }
}

pub fn run(args: &Args) -> Result<()> {
    let n = args.n;
    if let Some(path) = &args.plot {
        check_output(path, args.force.force)?;
    }
    let mut optimizer =
        optimizer(n, args.max_bits_per_element)?.rational_k(args.k == KArg::Rational);
    if let Some(coding) = args.coding {
        optimizer = optimizer.coding(coding.into());
    }
    if let Some(bytes) = args.max_memory {
        optimizer = optimizer.max_memory(bytes);
    }
    if let Some(c) = args.churn {
        optimizer = optimizer.churn(c);
    }
    if args.frontier {
        let fpr = args.fpr.expect("clap requires --fpr");
        let frontier = optimizer
            .frontier(n, fpr)
            .map_err(with_option)
            .context("no frontier")?;
        let out = if args.json {
            let plans: Vec<_> = frontier
                .iter()
                .map(|p| {
                    let mut v = plan_json(&p.plan);
                    v["memory_factor"] = json!(p.memory_factor);
                    v
                })
                .collect();
            format!(
                "{}\n",
                json!({
                    "n": n.to_string(),
                    "target_fpr": fpr,
                    "max_bits_per_element": args.max_bits_per_element,
                    "max_memory": args.max_memory,
                    "churn": args.churn,
                    "plans": plans,
                })
            )
        } else {
            frontier_table(n, fpr, args.churn, &frontier)
        };
        return write_stdout(out.as_bytes());
    }
    let plan = match (args.budget_bytes, args.fpr) {
        (Some(budget), _) => optimizer.plan(n, budget),
        (None, Some(fpr)) => optimizer.plan_for_fpr(n, fpr),
        (None, None) => unreachable!("clap requires one of them"),
    }
    .map_err(with_option)
    .context("no plan")?;

    // The plot's bits per element: the budget's, or what the plan needs for its target.
    let z_per_n = match args.budget_bytes {
        Some(budget) => 8.0 * budget as f64 / n as f64,
        None => plan.bits_per_element,
    };
    if let Some(path) = &args.plot {
        plot(path, z_per_n, args.max_bits_per_element).context(path.display())?;
    }

    let out = if args.json {
        format!("{}\n", to_json(args, &plan))
    } else {
        format!("{plan}\n")
    };
    write_stdout(out.as_bytes())
}

/// The frontier as a table: a row a plan, memory at both sides beside bytes on the wire.
fn frontier_table(n: u64, fpr: f64, churn: Option<f64>, frontier: &[FrontierPlan]) -> String {
    let mut out =
        format!("frontier for n = {n} keys at f <= {fpr}: bytes on the wire against memory\n");
    let delta = churn.map_or(String::new(), |c| format!("delta at c = {c}"));
    out += &format!(
        "{:<14}{:>12}{:>9}{:>4}  {:<9}{:>10}{:>12}{:>12}{:>20}{:>16}{:>20}\n",
        "memory cap",
        "m",
        "m/n",
        "k",
        "coding",
        "f",
        "wire bytes",
        "worst case",
        delta,
        "receiver bytes",
        "counting sender"
    );
    for point in frontier {
        let plan = &point.plan;
        let memory = plan.memory();
        let cap = match point.memory_factor {
            Some(1) => "1x (optimal)".to_string(),
            Some(f) => format!("{f}x"),
            None => "unbounded".to_string(),
        };
        let delta = plan
            .delta
            .map_or(String::new(), |d| format!("{:.0}", d.expected_bytes));
        out += &format!(
            "{:<14}{:>12}{:>9.3}{:>4}  {:<9}{:>10.6}{:>12.0}{:>12}{:>20}{:>16}{:>20}\n",
            cap,
            plan.m(),
            plan.m() as f64 / n as f64,
            plan.k().to_string(),
            plan.coding.to_string(),
            plan.false_positive_rate,
            plan.expected_bytes,
            plan.worst_case_bytes,
            delta,
            memory.receiver,
            memory.counting_sender
        );
    }
    out += "wire bytes: expected frame bytes; worst case: exceeded with probability 1e-6 at \
            most; receiver bytes: the decoded filter, ceil(m/8), also the sender's bits (twice \
            that for a sender of deltas, which keeps its last generation); counting sender: m \
            counters of a byte each and the bits last sent\n";
    if let Some(bent) = frontier.last().and_then(|p| p.plan.bent) {
        let u = bent.unconstrained;
        out += &format!(
            "the unbounded plan is held by --{} (m <= {}): without it m = {}, k = {}, {} bytes \
             worst case, {} bytes of receiver memory\n",
            bent.limit.name().replace('_', "-"),
            bent.max_m,
            u.m,
            u.k,
            u.worst_case_bytes,
            u.receiver_bytes
        );
    }
    out
}

/// The optimizer's error, naming the program's option that raises a limit the plan needs
/// more of.
pub fn with_option(e: bloomwire::Error) -> String {
    match e {
        bloomwire::Error::PlanExceedsLimits {
            name,
            needed,
            limit,
        } => format!(
            "the plan needs {name} = {needed}, above the limit {limit}: raise it with --{} \
             {needed} (the receiver needs the same limit), or relax the target",
            name.replace('_', "-")
        ),
        e => e.to_string(),
    }
}

/// The optimizer for n keys: the program's limits (those of the library unless raised
/// with `--max-m`, `--max-k`, `--max-payload` or `--max-filter-bytes`) and m at most
/// `--max-bits-per-element` times n (the library's `Optimizer::max_bits_per_element`).
pub fn optimizer(n: u64, max_bits_per_element: Option<f64>) -> Result<Optimizer> {
    let optimizer = Optimizer::new().limits(limits());
    match max_bits_per_element {
        None => Ok(optimizer),
        Some(r) if r.is_finite() && r * n as f64 >= 1.0 => Ok(optimizer.max_bits_per_element(r)),
        Some(r) => Err(Failure(format!(
            "--max-bits-per-element {r} leaves no bits for {n} keys"
        ))),
    }
}

fn to_json(args: &Args, plan: &Plan) -> serde_json::Value {
    let mut v = plan_json(plan);
    v["budget_bytes"] = json!(args.budget_bytes);
    v["target_fpr"] = json!(args.fpr);
    v["max_bits_per_element"] = json!(args.max_bits_per_element);
    v["max_memory"] = json!(args.max_memory);
    v["churn"] = json!(args.churn);
    v["rational_k"] = json!(args.k == KArg::Rational);
    v["plot"] = json!(args.plot.as_ref().map(|p| p.display().to_string()));
    v
}

/// A plan's figures: m, k, bytes on the wire, memory at both sides, deltas, the limit that
/// bent it.
fn plan_json(plan: &Plan) -> serde_json::Value {
    let n = plan.n as f64;
    let memory = plan.memory();
    let delta = plan.delta.map(|d| {
        json!({
            "changed": d.changed,
            "expected_bytes": d.expected_bytes,
            "worst_case_bytes": d.worst_case_bytes,
        })
    });
    let bent = plan.bent.map(|b| {
        let u = b.unconstrained;
        json!({
            "limit": b.limit.name(),
            "max_m": b.max_m,
            "unconstrained": {
                "m": u.m,
                "k": u.k.to_f64(),
                "coding": u.coding.to_string(),
                "expected_bytes": u.expected_bytes,
                "worst_case_bytes": u.worst_case_bytes,
                "false_positive_rate": u.false_positive_rate,
                "receiver_bytes": u.receiver_bytes,
            },
        })
    });
    let uncompressed = plan.uncompressed.map(|raw| {
        json!({
            "m": raw.m,
            "k": raw.k.to_f64(),
            "m_per_n": raw.m as f64 / n,
            "bytes": raw.bytes,
            "bits_per_element": 8.0 * raw.bytes / n,
            "false_positive_rate": raw.false_positive_rate,
        })
    });
    json!({
        "n": plan.n.to_string(),
        "m": plan.m(),
        "k": plan.k().to_f64(),
        "m_per_n": plan.m() as f64 / n,
        "coding": plan.coding.to_string(),
        "receiver_bytes": plan.receiver_bytes,
        "expected_bytes": plan.expected_bytes,
        "worst_case_bytes": plan.worst_case_bytes,
        "epsilon": plan.epsilon,
        "bits_per_element": plan.bits_per_element,
        "false_positive_rate": plan.false_positive_rate,
        "uncompressed": uncompressed,
        "memory": {
            "receiver": memory.receiver,
            "sender": memory.sender,
            "delta_sender": memory.delta_sender,
            "counting_sender": memory.counting_sender,
        },
        "delta": delta,
        "bent": bent,
    })
}

/// The paper's false positive rate for a real k and m/n = `r`: `(1 - exp(-k/r))^k`.
fn fpr(k: f64, r: f64) -> f64 {
    (1.0 - theory::p_zero(k, 1.0, r)).powf(k)
}

/// The m/n whose ideal compressed size `m H(p)` is `z_per_n` bits per key with k hash
/// functions. `m/n H(exp(-k n/m))` increases with m/n and is at most m/n, so the root lies
/// above `z_per_n`; it is found by bisection.
fn compressed_m_per_n(k: f64, z_per_n: f64) -> f64 {
    let size = |r: f64| r * theory::entropy(theory::p_zero(k, 1.0, r));
    let mut lo = z_per_n;
    let mut hi = 2.0 * z_per_n;
    while size(hi) < z_per_n {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if size(mid) < z_per_n {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// One curve of the plot: the false positive rate and m/n at each k.
struct Curve {
    label: String,
    color: RGBColor,
    m_per_n: Box<dyn Fn(f64) -> f64>,
}

/// Figure 1/2 of the paper for `z_per_n` bits per element: f against k (continuous, as in
/// the paper) for the uncompressed filter with m/n = z/n and for the compressed filter whose
/// m makes `m H(p) = z`, each with m/n capped at `max_m_per_n`, and each curve's best
/// integer k marked.
fn plot(path: &Path, z_per_n: f64, max_m_per_n: Option<f64>) -> Result<(), String> {
    let cap = max_m_per_n.unwrap_or(f64::INFINITY);
    let k_max = (2.0 * std::f64::consts::LN_2 * z_per_n).ceil().max(4.0);
    let curves = [
        Curve {
            label: format!("uncompressed, m/n = z/n = {}", short(z_per_n)),
            color: RGBColor(0x1f, 0x77, 0xb4),
            m_per_n: Box::new(move |_| z_per_n.min(cap)),
        },
        Curve {
            label: match max_m_per_n {
                Some(cap) => format!("compressed, m H(p) = z, m/n <= {cap}"),
                None => "compressed, m H(p) = z".into(),
            },
            color: RGBColor(0xd6, 0x27, 0x28),
            m_per_n: Box::new(move |k| compressed_m_per_n(k, z_per_n).min(cap)),
        },
    ];
    let steps = 400;
    let ks: Vec<f64> = (0..=steps)
        .map(|i| 1.0 + (k_max - 1.0) * f64::from(i) / f64::from(steps))
        .collect();
    let series: Vec<Vec<(f64, f64)>> = curves
        .iter()
        .map(|c| ks.iter().map(|&k| (k, fpr(k, (c.m_per_n)(k)))).collect())
        .collect();
    let (lo, hi) = series
        .iter()
        .flatten()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &(_, f)| {
            (lo.min(f), hi.max(f))
        });
    let (lo, hi) = (lo / 1.5, hi * 1.5);
    // Labels at 1, 2, 3 and 5 times the powers of ten, which plotters' log scale does not
    // give for ranges of about a decade.
    let decades = lo.log10().floor() as i32..=hi.log10().ceil() as i32;
    let y_labels: Vec<f64> = decades
        .flat_map(|e| [1.0, 2.0, 3.0, 5.0].map(|d| d * 10f64.powi(e)))
        .filter(|y| (lo..=hi).contains(y))
        .collect();

    let root = SVGBackend::new(path, (800, 520)).into_drawing_area();
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "False positive rate against k at z/n = {} bits per element",
                short(z_per_n)
            ),
            ("sans-serif", 20),
        )
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(1.0..k_max, (lo..hi).log_scale().with_key_points(y_labels))
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("hash functions k")
        .y_desc("false positive rate f")
        .x_label_formatter(&|k| format!("{k:.0}"))
        .y_label_formatter(&|f| short(*f))
        .draw()
        .map_err(e)?;
    // Labels of the optima: the uncompressed one well above its point, clear of both curves
    // where they meet; the compressed one below.
    let offsets = [(-100, -45), (8, 8)];
    for ((curve, points), offset) in curves.iter().zip(series).zip(offsets) {
        let color = curve.color;
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(e)?
            .label(curve.label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], color.stroke_width(2)));
        // The best integer k of this curve.
        let (k, f) = (1..=k_max as u32)
            .map(|k| {
                (
                    f64::from(k),
                    fpr(f64::from(k), (curve.m_per_n)(f64::from(k))),
                )
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("k_max >= 4");
        let label = format!("k = {k}, m/n = {:.1}, f = {f:.4}", (curve.m_per_n)(k));
        let font = ("sans-serif", 14).into_font().color(&color);
        chart
            .draw_series([EmptyElement::at((k, f))
                + Circle::new((0, 0), 5, color.filled())
                + Text::new(label, offset, font)])
            .map_err(e)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)
}

/// A number with at most four significant decimals and no trailing zeros: `8`, `0.0177`.
fn short(x: f64) -> String {
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').into()
    } else {
        s
    }
}
