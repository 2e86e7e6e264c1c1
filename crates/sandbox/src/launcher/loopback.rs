//! Bringing up the loopback interface of a new network namespace (rtnetlink `RTM_SETLINK`),
//! so the host can listen on `127.0.0.1` for the egress proxy.

use netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST, NetlinkMessage, NetlinkPayload};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_packet_route::link::{LinkFlags, LinkMessage};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_ROUTE};

/// The loopback interface's index in every network namespace.
const LOOPBACK_INDEX: u32 = 1;

/// Sets `lo` up; the kernel's acknowledgement is awaited.
pub(super) fn up() -> Result<(), String> {
    let mut socket = Socket::new(NETLINK_ROUTE).map_err(|e| e.to_string())?;
    socket
        .bind_auto()
        .map_err(|e| format!("binding a netlink socket: {e}"))?;
    socket
        .connect(&SocketAddr::new(0, 0))
        .map_err(|e| format!("connecting a netlink socket: {e}"))?;
    let mut link = LinkMessage::default();
    link.header.index = LOOPBACK_INDEX;
    link.header.flags = LinkFlags::Up;
    link.header.change_mask = LinkFlags::Up;
    let mut request = NetlinkMessage::from(RouteNetlinkMessage::SetLink(link));
    request.header.flags = NLM_F_REQUEST | NLM_F_ACK;
    request.header.sequence_number = 1;
    request.finalize();
    let mut buf = vec![0_u8; request.buffer_len()];
    request.serialize(&mut buf);
    socket
        .send(&buf, 0)
        .map_err(|e| format!("sending to netlink: {e}"))?;
    let mut answer = Vec::with_capacity(4096);
    socket
        .recv(&mut answer, 0)
        .map_err(|e| format!("reading netlink's answer: {e}"))?;
    let reply = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&answer)
        .map_err(|e| format!("netlink's answer: {e}"))?;
    match reply.payload {
        NetlinkPayload::Error(error) => match error.code {
            None => Ok(()),
            Some(code) => Err(format!("setting lo up: errno {code}")),
        },
        _ => Err("netlink answered something else than an acknowledgement".into()),
    }
}
