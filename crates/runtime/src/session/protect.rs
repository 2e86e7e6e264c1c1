//! Files the agent's tools must never reach (the approval database): where they lie against
//! the places a session's tools may write.

use std::path::{Path, PathBuf};

use tollgate_sandbox::Policy as SandboxPolicy;

/// Why the session must not start when a protected file (the approval database) lies where
/// its tools may write: the workspace, or a writable path of the shell tool's sandbox.
pub(super) fn protected_writable(
    protected: &[PathBuf],
    workspace: &Path,
    shell: Option<&SandboxPolicy>,
) -> Option<String> {
    let writable = std::iter::once(workspace.to_path_buf()).chain(
        shell
            .into_iter()
            .flat_map(|policy| policy.writable.iter())
            .map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| w.clone())),
    );
    let writable: Vec<PathBuf> = writable.collect();
    protected.iter().find_map(|file| {
        let file = real_path(file);
        let dir = writable.iter().find(|w| file.starts_with(w))?;
        Some(format!(
            "the approval database {} is inside {}, which this agent's tools may write: they \
             could approve their own calls; keep it outside the workspace and the sandbox's \
             writable paths",
            file.display(),
            dir.display()
        ))
    })
}

/// `path` resolved as the file system will: the longest existing prefix made real (symlinks
/// followed), the rest applied by name (`..` drops a name: a folder that does not exist yet
/// cannot be a symlink).
fn real_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let parts: Vec<Component<'_>> = absolute.components().collect();
    for existing in (1..=parts.len()).rev() {
        let prefix: PathBuf = parts[..existing].iter().collect();
        let Ok(mut real) = std::fs::canonicalize(&prefix) else {
            continue;
        };
        for part in &parts[existing..] {
            match part {
                Component::ParentDir => {
                    real.pop();
                }
                Component::Normal(name) => real.push(name),
                _ => {}
            }
        }
        return real;
    }
    absolute
}
