//! Ways to root that are not `sudo`: a container given the host (`docker run --privileged`,
//! `-v /:/mnt`, `--pid=host`, the docker socket, `--cap-add=SYS_ADMIN`), entering init's
//! namespaces (`nsenter -t 1`), `newgrp` into another group, and administrator grants in a
//! cloud or cluster (`aws iam attach-user-policy … AdministratorAccess`, `gcloud …
//! add-iam-policy-binding --role=roles/owner`, `kubectl create clusterrolebinding
//! --clusterrole=cluster-admin`, `az role assignment create --role Owner`). Reported as
//! `privilege-escalation`.

use crate::rules::RuleId;
use crate::walk::{Analyzer, Call};
use crate::word::{UNKNOWN, Word};

/// Container engines whose `run`/`create` can hand a container the host.
const ENGINES: &[&str] = &["docker", "podman", "nerdctl", "lima", "finch", "buildah"];

/// Host paths that give a container the machine when mounted into it.
const HOST_PATHS: &[&str] = &[
    "/",
    "/etc",
    "/root",
    "/home",
    "/boot",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/var",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
];

/// Capabilities that let a container out.
const CAPS: &[&str] = &[
    "all",
    "sys_admin",
    "sys_module",
    "sys_ptrace",
    "sys_rawio",
    "dac_read_search",
    "sys_boot",
    "bpf",
];

pub(super) fn check(a: &mut Analyzer, base: &str, args: &[Word<'_>], call: &Call<'_>) {
    let why = match base {
        _ if ENGINES.contains(&base) => container(args),
        "nsenter" if enters_init(args) => {
            Some("`nsenter -t 1` enters the namespaces of the host's init".to_owned())
        }
        "newgrp" => Some("`newgrp` starts a shell with another group's privileges".to_owned()),
        "aws" | "gcloud" | "kubectl" | "oc" | "az" => cloud_grant(base, args),
        _ => None,
    };
    if let Some(why) = why {
        a.report(RuleId::PrivilegeEscalation, call.span.clone(), why);
    }
}

/// `ENGINE [container] run|create|exec …` with an option that gives away the host.
fn container(args: &[Word<'_>]) -> Option<String> {
    let verb = args
        .iter()
        .position(|w| matches!(w.lit(), Some("run" | "create" | "exec" | "update")))?;
    let mut rest = args[verb + 1..].iter();
    while let Some(w) = rest.next() {
        let t = w.text.as_str();
        if !t.starts_with('-') || t == "--" {
            break;
        }
        let (name, glued) = match t.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (t, None),
        };
        let takes = matches!(
            name,
            "-v" | "--volume"
                | "--mount"
                | "--pid"
                | "--ipc"
                | "--uts"
                | "--userns"
                | "--cap-add"
                | "--security-opt"
                | "--device"
                | "--network"
                | "--net"
        );
        let value = match glued {
            Some(v) => v,
            None if takes => rest.next().map(|v| v.text.clone()).unwrap_or_default(),
            None if name.starts_with("-v") && name.len() > 2 => name[2..].to_owned(),
            None => String::new(),
        };
        if let Some(why) = hands_host(name, &value) {
            return Some(format!("a container {why}"));
        }
    }
    None
}

/// Why option `name` with `value` hands a container the host, if it does.
fn hands_host(name: &str, value: &str) -> Option<String> {
    let lower = value.to_ascii_lowercase();
    match name {
        "--privileged" => Some("with every privilege of the host (`--privileged`)".to_owned()),
        "-v" | "--volume" => {
            let source = value.split(':').next().unwrap_or_default();
            host_path(source).then(|| format!("with `{source}` of the host mounted"))
        }
        _ if name.starts_with("-v") => {
            let source = value.split(':').next().unwrap_or_default();
            host_path(source).then(|| format!("with `{source}` of the host mounted"))
        }
        "--mount" => lower
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, v)| matches!(*k, "source" | "src") && host_path(v))
            .map(|(_, v)| format!("with `{v}` of the host mounted")),
        "--pid" | "--ipc" | "--uts" | "--userns" if lower == "host" => {
            Some(format!("in the host's namespaces (`{name}=host`)"))
        }
        "--cap-add" => {
            let cap = lower.trim_start_matches("cap_");
            CAPS.contains(&cap)
                .then(|| format!("with capability `{value}`"))
        }
        "--security-opt" if lower.contains("unconfined") || lower.contains("label=disable") => {
            Some(format!("without confinement (`{value}`)"))
        }
        "--device"
            if lower.starts_with("/dev/sd")
                || lower.starts_with("/dev/nvme")
                || lower.starts_with("/dev/mem") =>
        {
            Some(format!("with the host's disk `{value}`"))
        }
        _ => None,
    }
}

/// Whether `source` is a host path that gives the machine away (not a project directory).
fn host_path(source: &str) -> bool {
    if source.contains(UNKNOWN) {
        return false;
    }
    let n = crate::paths::normalize(source);
    HOST_PATHS.contains(&n.as_str()) || crate::paths::is_home_dir(&n)
}

/// `nsenter -t 1|--target=1 …` (or `-a` with `-t 1`).
fn enters_init(args: &[Word<'_>]) -> bool {
    args.iter().enumerate().any(|(i, w)| {
        let t = w.text.as_str();
        let value = match t {
            "-t" | "--target" => args.get(i + 1).map(|v| v.text.as_str()),
            _ => t
                .strip_prefix("--target=")
                .or_else(|| t.strip_prefix("-t"))
                .filter(|v| !v.is_empty()),
        };
        value == Some("1")
    })
}

/// Roles and policies that make their holder an administrator.
const ADMIN_ROLES: &[&str] = &[
    "administratoraccess",
    "iamfullaccess",
    "poweruseraccess",
    "roles/owner",
    "roles/editor",
    "roles/iam.securityadmin",
    "roles/iam.serviceaccounttokencreator",
    "roles/resourcemanager.projectiamadmin",
    "cluster-admin",
    "owner",
    "contributor",
    "user access administrator",
];

/// An administrator grant or new credentials in a cloud or cluster.
fn cloud_grant(base: &str, args: &[Word<'_>]) -> Option<String> {
    let lits: Vec<String> = args
        .iter()
        .filter(|w| !w.unknown)
        .map(|w| w.text.to_ascii_lowercase())
        .collect();
    let has = |t: &str| lits.iter().any(|l| l == t);
    let admin = lits.iter().any(|l| {
        let value = l.split_once('=').map_or(l.as_str(), |(_, v)| v);
        let last = value.rsplit([':', '/']).next().unwrap_or(value);
        ADMIN_ROLES.contains(&value) || ADMIN_ROLES.contains(&last)
    });
    let grants = match base {
        "aws" => {
            has("iam")
                && (lits
                    .iter()
                    .any(|l| l.starts_with("attach-") || l.starts_with("put-"))
                    && admin
                    || lits.iter().any(|l| {
                        matches!(
                            l.as_str(),
                            "create-access-key" | "create-login-profile" | "update-login-profile"
                        )
                    }))
        }
        "gcloud" => lits.iter().any(|l| l == "add-iam-policy-binding") && admin,
        "kubectl" | "oc" => {
            has("create") && (has("clusterrolebinding") || has("rolebinding")) && admin
                || lits.iter().any(|l| l == "add-cluster-role-to-user") && admin
        }
        "az" => has("role") && has("assignment") && has("create") && admin,
        _ => false,
    };
    grants.then(|| format!("`{base}` grants administrator rights or new credentials"))
}
