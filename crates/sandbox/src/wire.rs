//! Messages between a [`Sandbox`](crate::Sandbox) and its host process, over one Unix stream
//! socket: each message is a little-endian `u32` length and that many bytes of JSON. A
//! command's standard streams travel before its request as `SCM_RIGHTS` on a one-byte
//! message.

use serde::{Deserialize, Serialize};

use crate::policy::Policy;

/// Longest message either side accepts, in bytes (16 MiB).
pub(crate) const MAX_FRAME: usize = 16 * 1024 * 1024;

/// The byte that carries a request's file descriptors.
pub(crate) const FDS_MARKER: u8 = b'F';

/// First message, client → launcher: the policy to apply.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Hello {
    pub policy: Policy,
    /// The egress proxy's socket, for [`Network::Proxy`](crate::Network::Proxy).
    #[serde(default)]
    pub egress: Option<std::path::PathBuf>,
}

/// Launcher → client, once: the sandbox is ready, or why it is not.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Setup {
    Ready(crate::Features),
    Failed { feature: String, detail: String },
}

/// Client → host: run one command (its stdin, stdout and stderr came just before).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: String,
}

/// Host → client: how the command ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Done {
    /// The raw wait status of the command's first process (as `waitpid` reports it).
    Exited { wait_status: i32 },
    /// The command could not be started.
    SpawnFailed { error: String },
}

/// Encodes `message` as one frame.
pub(crate) fn frame(message: &impl Serialize) -> std::io::Result<Vec<u8>> {
    let body = serde_json::to_vec(message)?;
    let len = u32::try_from(body.len())
        .ok()
        .filter(|&len| len as usize <= MAX_FRAME)
        .ok_or_else(|| std::io::Error::other("message too large for the sandbox protocol"))?;
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// The body length announced by a frame header, checked against [`MAX_FRAME`].
pub(crate) fn body_len(header: [u8; 4]) -> std::io::Result<usize> {
    let len = u32::from_le_bytes(header) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("sandbox message of {len} bytes exceeds {MAX_FRAME}"),
        ));
    }
    Ok(len)
}

/// Decodes a frame body.
pub(crate) fn decode<T: for<'de> Deserialize<'de>>(body: &[u8]) -> std::io::Result<T> {
    serde_json::from_slice(body)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_oversized_headers_are_refused() {
        let bytes = frame(&Done::Exited { wait_status: 256 }).unwrap();
        let len = body_len(bytes[..4].try_into().unwrap()).unwrap();
        assert_eq!(len, bytes.len() - 4);
        let done: Done = decode(&bytes[4..]).unwrap();
        assert!(matches!(done, Done::Exited { wait_status: 256 }));
        assert!(body_len(u32::MAX.to_le_bytes()).is_err());
    }
}
