//! Which traces are kept: `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` as OpenTelemetry's
//! SDK configuration defines them, decided when a trace's first span starts.

use opentelemetry::trace::TraceId;

#[cfg(feature = "otlp")]
use crate::Error;

/// Which traces are kept. The default, as in OpenTelemetry's SDKs, is
/// `ParentBased(AlwaysOn)`: a trace that came with a decision keeps it, a new one is kept.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Sampler {
    /// Every trace.
    AlwaysOn,
    /// None.
    AlwaysOff,
    /// This share of traces (0 to 1), decided from the trace id, so every process that sees
    /// the trace decides the same.
    TraceIdRatio(f64),
    /// The decision a remote parent carried; a trace with none by the inner sampler.
    ParentBased(Box<Sampler>),
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler::ParentBased(Box::new(Sampler::AlwaysOn))
    }
}

impl Sampler {
    /// Whether a new trace is kept.
    pub(crate) fn root(&self, trace_id: TraceId) -> bool {
        match self {
            Sampler::AlwaysOn => true,
            Sampler::AlwaysOff => false,
            Sampler::TraceIdRatio(ratio) => {
                // The lower 63 bits of the id's last eight bytes against the share of 2^63.
                let low = u64::from_be_bytes(trace_id.to_bytes()[8..].try_into().unwrap_or([0; 8]));
                let bound = (ratio.clamp(0.0, 1.0) * (1u64 << 63) as f64) as u64;
                (low >> 1) < bound
            }
            Sampler::ParentBased(root) => root.root(trace_id),
        }
    }

    /// Whether a trace whose remote parent decided `parent_sampled` is kept.
    pub(crate) fn with_parent(&self, parent_sampled: bool, trace_id: TraceId) -> bool {
        match self {
            Sampler::ParentBased(_) => parent_sampled,
            other => other.root(trace_id),
        }
    }

    /// The sampler `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` name.
    #[cfg(feature = "otlp")]
    pub(crate) fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Result<Sampler, Error> {
        let name = var("OTEL_TRACES_SAMPLER").unwrap_or_default();
        let ratio = || -> Result<f64, Error> {
            match var("OTEL_TRACES_SAMPLER_ARG").filter(|v| !v.trim().is_empty()) {
                None => Ok(1.0),
                Some(arg) => arg
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|r| (0.0..=1.0).contains(r))
                    .ok_or(Error::Unsupported {
                        variable: "OTEL_TRACES_SAMPLER_ARG",
                        value: arg,
                        expected: "a number from 0 to 1",
                    }),
            }
        };
        Ok(match name.trim() {
            "" | "parentbased_always_on" => Sampler::default(),
            "always_on" => Sampler::AlwaysOn,
            "always_off" => Sampler::AlwaysOff,
            "traceidratio" => Sampler::TraceIdRatio(ratio()?),
            "parentbased_always_off" => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
            "parentbased_traceidratio" => {
                Sampler::ParentBased(Box::new(Sampler::TraceIdRatio(ratio()?)))
            }
            _ => {
                return Err(Error::Unsupported {
                    variable: "OTEL_TRACES_SAMPLER",
                    value: name,
                    expected: "always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio",
                });
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_keeps_its_share_of_traces_and_parents_decide_for_parent_based() {
        let ratio = Sampler::TraceIdRatio(0.1);
        let mut kept = 0;
        for i in 0..100_000u64 {
            // Ids spread as a generator's are.
            let low = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            if ratio.root(TraceId::from(u128::from(low))) {
                kept += 1;
            }
        }
        assert!((9_000..11_000).contains(&kept), "{kept}");
        let parented = Sampler::ParentBased(Box::new(ratio.clone()));
        let id = TraceId::from(u128::MAX);
        assert!(parented.with_parent(true, id));
        assert!(!parented.with_parent(false, TraceId::from(1)));
        assert!(!ratio.root(id) && !ratio.with_parent(true, id));
    }

    #[test]
    #[cfg(feature = "otlp")]
    fn the_variables_name_the_sampler_or_say_what_they_take() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(Sampler::from_vars(&vars(&[])).unwrap(), Sampler::default());
        assert_eq!(
            Sampler::from_vars(&vars(&[
                ("OTEL_TRACES_SAMPLER", "traceidratio"),
                ("OTEL_TRACES_SAMPLER_ARG", "0.1")
            ]))
            .unwrap(),
            Sampler::TraceIdRatio(0.1)
        );
        let err = Sampler::from_vars(&vars(&[
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "2"),
        ]))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "OTEL_TRACES_SAMPLER_ARG=\"2\" is not supported: expected a number from 0 to 1"
        );
        assert!(Sampler::from_vars(&vars(&[("OTEL_TRACES_SAMPLER", "jaeger_remote")])).is_err());
    }
}
