//! Reading `/proc/self/mountinfo` (see proc_pid_mountinfo(5)): each mount's mount point and
//! the per-mount flags a read-only remount must keep.

use std::path::PathBuf;

use nix::mount::MsFlags;

/// One line of `mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mount {
    /// Where it is mounted, unescaped.
    pub point: PathBuf,
    /// The per-mount flags to keep (`nosuid`, `nodev`, `noexec`, atime flags); a remount that
    /// drops a flag the kernel locked fails.
    pub keep: MsFlags,
}

/// Parses `mountinfo` text; lines that do not have the documented shape are skipped.
pub(super) fn parse(text: &str) -> Vec<Mount> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Mount> {
    // id parent major:minor root mount-point options [optional…] - type source super-options
    let mut fields = line.split(' ');
    let point = fields.nth(4)?;
    let options = fields.next()?;
    Some(Mount {
        point: PathBuf::from(unescape(point)),
        keep: options
            .split(',')
            .fold(MsFlags::empty(), |flags, option| flags | flag(option)),
    })
}

fn flag(option: &str) -> MsFlags {
    match option {
        "nosuid" => MsFlags::MS_NOSUID,
        "nodev" => MsFlags::MS_NODEV,
        "noexec" => MsFlags::MS_NOEXEC,
        "noatime" => MsFlags::MS_NOATIME,
        "nodiratime" => MsFlags::MS_NODIRATIME,
        "relatime" => MsFlags::MS_RELATIME,
        "strictatime" => MsFlags::MS_STRICTATIME,
        _ => MsFlags::empty(),
    }
}

/// Undoes the kernel's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134`
/// backslash).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                let value = d.iter().fold(0_u32, |v, c| v * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_mount_points_and_kept_flags() {
        let text = "\
22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:5 - proc proc rw
30 22 0:26 / /my\\040dir rw,noatime - tmpfs tmpfs rw
garbage
";
        let mounts = parse(text);
        assert_eq!(mounts.len(), 2);
        assert_eq!(mounts[0].point, PathBuf::from("/proc"));
        assert_eq!(
            mounts[0].keep,
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC | MsFlags::MS_RELATIME
        );
        assert_eq!(mounts[1].point, PathBuf::from("/my dir"));
        assert_eq!(mounts[1].keep, MsFlags::MS_NOATIME);
    }

    #[test]
    fn escapes_are_decoded_and_stray_backslashes_kept() {
        assert_eq!(unescape("a\\134b\\011c"), "a\\b\tc");
        assert_eq!(unescape("a\\9b\\"), "a\\9b\\");
    }
}
