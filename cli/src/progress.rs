//! A progress bar on stderr for long runs, drawn only when stderr is a terminal.

use std::io::{self, IsTerminal};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs of at least this many bytes get a progress bar (on a terminal).
pub const FROM_BYTES: u64 = 1 << 20;

/// The stages of a long run, each a bar (or a spinner when its length is unknown); nothing
/// at all when stderr is not a terminal, so that logs and pipes get no control bytes.
pub struct Progress {
    enabled: bool,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Progress for an input of `input_bytes`: drawn when stderr is a terminal, the input
    /// is at least [`FROM_BYTES`] and `--quiet` was not given.
    pub fn for_input(input_bytes: u64) -> Progress {
        Progress {
            enabled: !crate::output::quiet()
                && io::stderr().is_terminal()
                && input_bytes >= FROM_BYTES,
            bar: None,
        }
    }

    /// Start a stage (ending the previous one): a bar to `len` in `unit`, or a spinner.
    pub fn stage(&mut self, what: &str, len: Option<u64>, unit: &str) {
        self.finish();
        if !self.enabled {
            return;
        }
        let bar = match len {
            Some(len) => ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
                .with_style(
                    ProgressStyle::with_template(&format!(
                        "{{msg}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit} ({{eta}})"
                    ))
                    .expect("a valid template")
                    .progress_chars("=> "),
                ),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(
                ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                    .expect("a valid template"),
            ),
        };
        bar.set_message(what.to_owned());
        if len.is_none() {
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
        }
        self.bar = Some(bar);
    }

    /// Set the current stage's position.
    pub fn set(&self, pos: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(pos);
        }
    }

    /// End the current stage and clear its line.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
