//! Where a command hook runs: in the OS sandbox ([`tollgate_sandbox`]) with the hook's own
//! scratch directory, or unconfined when admin config turned the sandbox off; and the
//! environment it gets.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tollgate_protocol::HookSource;
use tollgate_sandbox::{Launcher, Network, Policy, Sandbox};

use crate::http::GuardedEgress;

/// Environment variables a command hook gets from the runtime's environment (when set);
/// everything else the runtime has (API keys, webhook secrets) is withheld unless config
/// passes it through by name.
pub const MINIMAL_ENV: [&str; 10] = [
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM",
];

/// Environment variable naming the folder of the file that declared the hook (see
/// [`CommandHook::declared_in`](super::CommandHook::declared_in)), when it is known.
pub const CONFIG_DIR_ENV: &str = "HOOK_CONFIG_DIR";

/// Environment variable naming the hook's scratch directory (writable, kept for the hook's
/// lifetime, removed with it).
pub const SCRATCH_ENV: &str = "HOOK_SCRATCH_DIR";

/// How a command hook is contained.
#[derive(Debug, Clone, PartialEq)]
pub enum Containment {
    /// In the OS sandbox with this policy; the hook's scratch directory is added to its
    /// writable paths and its working directory to its readable ones at the first run.
    Sandbox(Policy),
    /// Unconfined (`sandbox: off`, admin config only).
    Off,
}

impl Containment {
    /// The default for hooks from `source`: sandboxed, the host's network for trusted sources
    /// (built-in, agent config, admin config) and none for external ones (skills, plugins, user
    /// config).
    pub fn default_for(source: HookSource) -> Self {
        let network = if source.is_trusted() {
            Network::On
        } else {
            Network::Off
        };
        Self::Sandbox(Policy::new(network))
    }
}

/// A hook's containment, with the sandbox built at its first run.
#[derive(Debug)]
pub(super) struct Confinement {
    pub containment: Containment,
    pub launcher: Option<Launcher>,
    /// Networks a proxied hook may reach although the SSRF guard refuses them.
    pub egress_allow: Vec<ipnet::IpNet>,
    prepared: OnceLock<Result<Prepared, String>>,
}

/// A built sandbox and the scratch directory it writes to.
#[derive(Debug, Clone)]
pub(super) struct Prepared {
    pub sandbox: Sandbox,
    pub scratch: Arc<tempfile::TempDir>,
}

impl Confinement {
    pub(super) fn new(containment: Containment) -> Self {
        Self {
            containment,
            launcher: None,
            egress_allow: Vec::new(),
            prepared: OnceLock::new(),
        }
    }

    /// The sandbox (`None` when the hook is unconfined), built on first use; it shows `cwd`
    /// and the hook's config folder (read-only) and `writable` (a Claude Code hook's
    /// `CLAUDE_ENV_FILE` folder) even under its private `/tmp`. `Err` when the
    /// scratch directory cannot be created.
    pub(super) fn sandbox(
        &self,
        cwd: &Path,
        config_dir: Option<&Path>,
        writable: Option<&Path>,
    ) -> Option<Result<Prepared, String>> {
        let Containment::Sandbox(policy) = &self.containment else {
            return None;
        };
        let prepared = self.prepared.get_or_init(|| {
            let scratch = tempfile::Builder::new()
                .prefix("tollgate-hook-")
                .tempdir()
                .map_err(|e| format!("cannot create the hook's scratch directory: {e}"))?;
            let mut policy = policy.clone().writable(scratch.path()).readable(cwd);
            policy.readable.extend(config_dir.map(Path::to_path_buf));
            policy.writable.extend(writable.map(Path::to_path_buf));
            let launcher = self.launcher.clone().or_else(Launcher::find);
            let egress = Arc::new(GuardedEgress::new(&self.egress_allow));
            Ok(Prepared {
                sandbox: Sandbox::with_launcher(policy, launcher).with_egress(egress),
                scratch: Arc::new(scratch),
            })
        });
        Some(prepared.clone())
    }
}

/// The environment of one run: [`MINIMAL_ENV`] and `passthrough` from the runtime's
/// environment, then `extra`.
pub(super) fn environment(
    passthrough: &[String],
    extra: Vec<(String, String)>,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = std::env::vars_os()
        .filter(|(key, _)| {
            MINIMAL_ENV.iter().any(|k| key == k) || passthrough.iter().any(|k| key == k.as_str())
        })
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    for (key, value) in extra {
        env.retain(|(k, _)| *k != key);
        env.push((key, value));
    }
    env
}

/// The directory a hook runs in: the configured one, else the runtime's.
pub(super) fn working_dir(configured: Option<&Path>) -> PathBuf {
    configured
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"))
}
