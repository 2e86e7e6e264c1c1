//! How a command hook is contained: the admin's sandbox settings for its source, widened by its
//! own `sandbox:` entry, and the summary `tollgate check` shows.

use serde_json::{Value, json};
use tollgate_handlers::command::{Containment, Network, Policy as SandboxPolicy};

use crate::sandbox::{HookSandbox, NetworkChoice, SandboxSettings};
use crate::spec::HookSpec;

/// How a command hook from `spec` is contained under the admin `settings`, and the variables
/// passed through to it.
pub(super) fn containment(
    settings: &SandboxSettings,
    spec: &HookSpec,
) -> (Containment, Vec<String>) {
    let mut widening = settings.for_source(spec.source);
    let off = settings.off || matches!(spec.sandbox, Some(HookSandbox::Off));
    if let Some(HookSandbox::Widen(own)) = &spec.sandbox {
        widening.merge(own);
    }
    if off {
        return (Containment::Off, widening.env);
    }
    let default = if spec.source.is_trusted() {
        NetworkChoice::Host
    } else {
        NetworkChoice::Off
    };
    let mut policy = SandboxPolicy::new(widening.network.unwrap_or(default).into());
    policy.hidden.extend(settings.hidden.iter().cloned());
    policy.writable.extend(widening.writable);
    (Containment::Sandbox(policy), widening.env)
}

/// `"off"`, or `{"network": "on"|"off", "writable": [...]}` for `tollgate check`.
pub(super) fn containment_summary(containment: &Containment) -> Value {
    match containment {
        Containment::Off => json!("off"),
        Containment::Sandbox(policy) => json!({
            "network": match policy.network {
                Network::Off => "off",
                Network::Proxy => "proxy",
                Network::On => "host",
            },
            "writable": policy.writable,
        }),
    }
}
