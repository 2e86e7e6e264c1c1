//! Passing file descriptors over a Unix socket (`SCM_RIGHTS`), and blocking frame I/O for the
//! launcher side.

use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

use crate::wire::{self, FDS_MARKER};

/// How many descriptors one request carries: stdin, stdout, stderr.
pub(crate) const REQUEST_FDS: usize = 3;

/// Sends the marker byte with `fds` attached. Returns the bytes sent (0 or 1).
pub(crate) fn send_fds(socket: BorrowedFd<'_>, fds: &[BorrowedFd<'_>]) -> std::io::Result<usize> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(REQUEST_FDS))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(std::io::Error::other(
            "too many descriptors for one message",
        ));
    }
    let sent = rustix::net::sendmsg(
        socket,
        &[IoSlice::new(&[FDS_MARKER])],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    Ok(sent)
}

/// Receives the marker byte and the descriptors attached to it. `Ok(None)` at end of stream.
pub(crate) fn recv_fds(socket: BorrowedFd<'_>) -> std::io::Result<Option<Vec<OwnedFd>>> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(REQUEST_FDS))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0_u8; 1];
    let received = rustix::net::recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    if received.bytes == 0 {
        return Ok(None);
    }
    let mut fds = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    if byte[0] != FDS_MARKER {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "sandbox protocol: expected the descriptor marker",
        ));
    }
    Ok(Some(fds))
}

/// Reads one frame, blocking. `Ok(None)` at a clean end of stream.
pub(crate) fn read_frame<T: for<'de> serde::Deserialize<'de>>(
    mut reader: impl Read,
) -> std::io::Result<Option<T>> {
    let mut header = [0_u8; 4];
    match reader.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut body = vec![0_u8; wire::body_len(header)?];
    reader.read_exact(&mut body)?;
    wire::decode(&body).map(Some)
}

/// Writes one frame, blocking.
pub(crate) fn write_frame(
    mut writer: impl Write,
    message: &impl serde::Serialize,
) -> std::io::Result<()> {
    writer.write_all(&wire::frame(message)?)?;
    writer.flush()
}
