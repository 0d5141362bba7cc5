//! What a case concludes: pass (with what was seen), fail or skip (with why).

/// A case's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// The behaviour the case looks for was observed.
    Pass,
    /// The agent broke the rule the case checks.
    Fail,
    /// The case could not run here (a capability not advertised, no matching command).
    Skip,
}

impl Status {
    /// `PASS`, `FAIL`, `SKIP`: the word of the text report.
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        }
    }

    /// `pass`, `fail`, `skip`: the word of the JSON report.
    pub fn json(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Skip => "skip",
        }
    }
}

/// A case that did not pass: failed or skipped, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub status: Status,
    pub detail: String,
}

impl Outcome {
    /// The same outcome, its detail prefixed with the step it happened in.
    pub fn context(mut self, step: &str) -> Outcome {
        self.detail = format!("{step}: {}", self.detail);
        self
    }
}

/// What a case returns: `Ok(what was observed)` passes; `Err` fails or skips.
pub(crate) type Verdict = Result<String, Outcome>;

/// A failure with `detail`.
pub(crate) fn fail(detail: impl Into<String>) -> Outcome {
    Outcome {
        status: Status::Fail,
        detail: detail.into(),
    }
}

/// A skip with its reason.
pub(crate) fn skip(detail: impl Into<String>) -> Outcome {
    Outcome {
        status: Status::Skip,
        detail: detail.into(),
    }
}

/// Fails the case with a formatted detail unless `cond` holds.
macro_rules! conform_ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::verdict::fail(format!($($fmt)+)));
        }
    };
}
pub(crate) use conform_ensure;
