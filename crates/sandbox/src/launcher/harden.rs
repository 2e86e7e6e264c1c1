//! The host's hardening, inherited by every command it starts: no new privileges, Landlock
//! (writes only where the policy allows, no signals or abstract sockets outside the sandbox),
//! a seccomp filter against kernel interfaces a command never needs, and no capabilities.

use std::collections::BTreeMap;
use std::path::Path;

use caps::CapSet;
use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, path_beneath_rules,
};
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::outer::Failure;
use crate::policy::Policy;
use crate::{Features, LandlockStatus};

/// Applies everything; only `no_new_privs` and dropping capabilities are required.
pub(super) fn apply(policy: &Policy, pseudo_terminals: bool) -> Result<Features, Failure> {
    nix::sys::prctl::set_no_new_privs().map_err(|e| Failure::new("no_new_privs", e))?;
    let landlock = landlock(policy);
    let seccomp = seccomp().is_ok();
    drop_capabilities()?;
    Ok(Features {
        landlock,
        seccomp,
        network_namespace: policy.network != crate::Network::On,
        pseudo_terminals,
    })
}

/// The newest Landlock ABI this code knows; older kernels get what they support.
const LANDLOCK_ABI: ABI = ABI::V6;

fn landlock(policy: &Policy) -> LandlockStatus {
    match restrict(policy) {
        Ok(RulesetStatus::FullyEnforced) => LandlockStatus::Full,
        Ok(RulesetStatus::PartiallyEnforced) => LandlockStatus::Partial,
        _ => LandlockStatus::Unsupported,
    }
}

fn restrict(policy: &Policy) -> Result<RulesetStatus, landlock::RulesetError> {
    let abi = LANDLOCK_ABI;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    // Devices: read, write and ioctl on the nodes the view keeps; nothing else is allowed.
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
    let mut writable: Vec<&Path> = policy.writable.iter().map(|p| p.as_path()).collect();
    writable.extend([Path::new("/tmp"), Path::new("/dev/shm")]);
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?
        .create()?
        .add_rules(path_beneath_rules(["/"], read))?
        .add_rules(path_beneath_rules(["/dev"], device))?
        .add_rules(path_beneath_rules(writable, all))?
        .restrict_self()?;
    Ok(status.ruleset)
}

/// Syscalls refused with `EPERM`: new namespaces and mounts, kernel keyrings, BPF, perf,
/// userfaultfd, io_uring, module and kexec loading, and terminal input injection.
fn seccomp() -> Result<(), seccompiler::Error> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let always = [
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
    ];
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        always.into_iter().map(|nr| (nr, Vec::new())).collect();
    let namespaces = u64::try_from(
        libc::CLONE_NEWNS
            | libc::CLONE_NEWUSER
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWCGROUP,
    )
    .unwrap_or(u64::MAX);
    // clone(2) with any namespace flag (its flags are the first argument on x86_64 and
    // aarch64).
    rules.insert(libc::SYS_clone, namespace_flag_rules(namespaces)?);
    rules.insert(
        libc::SYS_ioctl,
        [libc::TIOCSTI, libc::TIOCLINUX]
            .into_iter()
            .map(|request| {
                SeccompRule::new(vec![SeccompCondition::new(
                    1,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    // The request type differs between C libraries.
                    #[allow(clippy::unnecessary_cast)]
                    (request as u64),
                )?])
            })
            .collect::<Result<Vec<_>, seccompiler::BackendError>>()?,
    );
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    // clone3 passes its flags in memory, out of a filter's reach: report it missing, and the C
    // library falls back to clone(2), which the filter above checks.
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?;
    for filter in [deny, clone3] {
        let program: seccompiler::BpfProgram = filter.try_into()?;
        seccompiler::apply_filter(&program)?;
    }
    Ok(())
}

/// One rule per namespace flag: `clone(flags)` matches when that flag is set.
fn namespace_flag_rules(namespaces: u64) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    (0..64)
        .map(|bit| 1_u64 << bit)
        .filter(|flag| namespaces & flag != 0)
        .map(|flag| {
            SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )?])
        })
        .collect()
}

/// Empties the bounding, ambient, inheritable, permitted and effective sets: nothing the host
/// starts can regain a capability, not even as root inside the namespace.
fn drop_capabilities() -> Result<(), Failure> {
    let fail = |e: caps::errors::CapsError| Failure::new("capabilities", e);
    for cap in caps::all() {
        caps::drop(None, CapSet::Bounding, cap).map_err(fail)?;
    }
    for set in [
        CapSet::Ambient,
        CapSet::Inheritable,
        CapSet::Effective,
        CapSet::Permitted,
    ] {
        caps::clear(None, set).map_err(fail)?;
    }
    Ok(())
}
