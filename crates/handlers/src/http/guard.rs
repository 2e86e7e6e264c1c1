//! The SSRF guard: which addresses an http hook may connect to. Pure, no I/O.
//!
//! [`check_ip`] refuses every address that is not plainly on the public internet: loopback,
//! private, link-local, shared (CGNAT), unique-local, multicast, unspecified, broadcast, cloud
//! metadata, documentation, benchmarking and reserved ranges (after the [IANA IPv4] and [IANA
//! IPv6] special-purpose registries). IPv6 addresses outside `2000::/3`, the only block IANA
//! allocates for global unicast, are refused as reserved.
//!
//! IPv6 forms that embed an IPv4 address:
//! - IPv4-mapped `::ffff:0:0/96`: the socket connects to the embedded IPv4 address, so the
//!   address is checked (and allow-listed) as that IPv4 address;
//! - NAT64 well-known prefix `64:ff9b::/96`: a translator forwards to the embedded IPv4
//!   address, so the address is checked (and allow-listed) as that IPv4 address too (DNS64
//!   networks use this for public hosts); an allow entry for the IPv6 form does not count;
//! - IPv4-compatible `::/96`, NAT64 local-use `64:ff9b:1::/48`, 6to4 `2002::/16` and Teredo
//!   `2001::/32` are refused whole: they are deprecated or local, and where they lead depends on
//!   relays and translators we cannot see. An allow entry covering one lets it through only
//!   when every IPv4 address it embeds passes the guard by itself as well.
//!
//! The embedded IPv4 address is always judged before any allow entry for the IPv6 form, so no
//! IPv6 allow-list (`::/0` included) opens a metadata or loopback address in disguise.
//!
//! [IANA IPv4]: https://www.iana.org/assignments/iana-ipv4-special-registry/
//! [IANA IPv6]: https://www.iana.org/assignments/iana-ipv6-special-registry/

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

/// Why the SSRF guard refused an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// `0.0.0.0/8` ("this network"), `::`.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, and the deprecated IPv6 site-local
    /// `fec0::/10`.
    Private,
    /// Shared address space (carrier-grade NAT), `100.64.0.0/10`.
    SharedAddressSpace,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// Unique local IPv6 addresses, `fc00::/7`.
    UniqueLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// The limited broadcast address `255.255.255.255`.
    Broadcast,
    /// A cloud instance-metadata endpoint (`169.254.169.254`, `fd00:ec2::254`,
    /// `100.100.100.200`, `168.63.129.16`, `192.0.0.192`, …).
    Metadata,
    /// Documentation ranges: `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`,
    /// `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// Benchmarking ranges: `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Reserved or special-purpose: `192.0.0.0/24`, `192.88.99.0/24`, `240.0.0.0/4`,
    /// `2001::/23`, and IPv6 outside `2000::/3` (such as `100::/64` or `5f00::/16`).
    Reserved,
    /// An IPv6 form that embeds an IPv4 address and is refused whole.
    EmbeddedIpv4(Embedding),
}

/// An IPv6 form that embeds an IPv4 address and is refused whole (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Embedding {
    /// IPv4-compatible `::/96` (deprecated by RFC 4291).
    Ipv4Compatible,
    /// NAT64 local-use prefix `64:ff9b:1::/48` (RFC 8215).
    Nat64LocalUse,
    /// 6to4 `2002::/16` (deprecated by RFC 7526).
    SixToFour,
    /// Teredo `2001::/32` (RFC 4380).
    Teredo,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unspecified => "unspecified address",
            Self::Loopback => "loopback address",
            Self::Private => "private address",
            Self::SharedAddressSpace => "shared (CGNAT) address",
            Self::LinkLocal => "link-local address",
            Self::UniqueLocal => "unique local address",
            Self::Multicast => "multicast address",
            Self::Broadcast => "broadcast address",
            Self::Metadata => "cloud metadata address",
            Self::Documentation => "documentation address",
            Self::Benchmarking => "benchmarking address",
            Self::Reserved => "reserved address",
            Self::EmbeddedIpv4(Embedding::Ipv4Compatible) => "IPv4-compatible IPv6 address",
            Self::EmbeddedIpv4(Embedding::Nat64LocalUse) => "NAT64 local-use address",
            Self::EmbeddedIpv4(Embedding::SixToFour) => "6to4 address",
            Self::EmbeddedIpv4(Embedding::Teredo) => "Teredo address",
        })
    }
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), len)
}

const fn v6(s: [u16; 8], len: u8) -> Ipv6Net {
    let ip = Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    Ipv6Net::new_assert(ip, len)
}

/// Cloud metadata endpoints. Checked before the ranges so the reason names them, and because an
/// allow-list only lets them through when it names the single address (see [`check_ip`]).
const METADATA: &[IpAddr] = &[
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)), // AWS, GCP, Azure, OpenStack, Oracle, …
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),   // AWS ECS task metadata
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 23)),  // AWS EKS pod identity
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)), // Alibaba Cloud
    IpAddr::V4(Ipv4Addr::new(168, 63, 129, 16)),   // Azure wire server (a public address)
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),     // Oracle Cloud (legacy)
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)), // AWS IMDS over IPv6
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23)), // AWS EKS pod identity
];

/// Refused IPv4 ranges, most specific first where they overlap.
const V4_REFUSED: &[(Ipv4Net, Reason)] = &[
    (v4(255, 255, 255, 255, 32), Reason::Broadcast),
    (v4(0, 0, 0, 0, 8), Reason::Unspecified),
    (v4(10, 0, 0, 0, 8), Reason::Private),
    (v4(100, 64, 0, 0, 10), Reason::SharedAddressSpace),
    (v4(127, 0, 0, 0, 8), Reason::Loopback),
    (v4(169, 254, 0, 0, 16), Reason::LinkLocal),
    (v4(172, 16, 0, 0, 12), Reason::Private),
    (v4(192, 0, 0, 0, 24), Reason::Reserved),
    (v4(192, 0, 2, 0, 24), Reason::Documentation),
    (v4(192, 88, 99, 0, 24), Reason::Reserved),
    (v4(192, 168, 0, 0, 16), Reason::Private),
    (v4(198, 18, 0, 0, 15), Reason::Benchmarking),
    (v4(198, 51, 100, 0, 24), Reason::Documentation),
    (v4(203, 0, 113, 0, 24), Reason::Documentation),
    (v4(224, 0, 0, 0, 4), Reason::Multicast),
    (v4(240, 0, 0, 0, 4), Reason::Reserved),
];

/// Refused IPv6 ranges, checked in order after the embedded forms are handled.
const V6_REFUSED: &[(Ipv6Net, Reason)] = &[
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), Reason::Unspecified),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), Reason::Loopback),
    (
        v6([0, 0, 0, 0, 0, 0, 0, 0], 96),
        Reason::EmbeddedIpv4(Embedding::Ipv4Compatible),
    ),
    (
        v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),
        Reason::EmbeddedIpv4(Embedding::Nat64LocalUse),
    ),
    (v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), Reason::UniqueLocal),
    (v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), Reason::LinkLocal),
    (v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), Reason::Private),
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), Reason::Multicast),
    (
        v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32),
        Reason::EmbeddedIpv4(Embedding::Teredo),
    ),
    (v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48), Reason::Benchmarking),
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23), Reason::Reserved),
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
        Reason::Documentation,
    ),
    (
        v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16),
        Reason::EmbeddedIpv4(Embedding::SixToFour),
    ),
    (v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), Reason::Documentation),
];

/// Global unicast: the only IPv6 block IANA allocates from.
const V6_GLOBAL: Ipv6Net = v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3);

/// NAT64 well-known prefix: the last 32 bits are the IPv4 destination.
const NAT64_WELL_KNOWN: Ipv6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);

/// NAT64 local-use prefix: the IPv4 address sits where the local prefix length puts it.
const NAT64_LOCAL_USE: Ipv6Net = v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48);
/// 6to4: bits 16–47 are the IPv4 address of the site's relay.
const SIX_TO_FOUR: Ipv6Net = v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16);
/// Teredo: bits 32–63 are the server's IPv4 address, the last 32 the client's, inverted.
const TEREDO: Ipv6Net = v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32);
/// IPv4-compatible: the last 32 bits (`::` and `::1` excepted).
const IPV4_COMPATIBLE: Ipv6Net = v6([0, 0, 0, 0, 0, 0, 0, 0], 96);

/// Checks whether an http hook may connect to `ip`.
///
/// An address inside one of the `allow` networks passes (trusted admin configuration decides
/// them), except a [metadata](Reason::Metadata) address, which passes only when an `allow`
/// entry is that single address (`/32` or `/128`), so allowing `169.254.0.0/16` for some
/// link-local service does not open the instance-metadata endpoint too.
///
/// An IPv6 address that embeds an IPv4 address answers for that IPv4 address first, and no
/// allow entry for the IPv6 form can overrule it:
/// - IPv4-mapped and NAT64 well-known (`64:ff9b::/96`) addresses are checked, and
///   allow-listed, as their IPv4 address only;
/// - the forms refused whole (IPv4-compatible, NAT64 local-use, 6to4, Teredo) pass only when
///   an `allow` entry covers the IPv6 address **and** every IPv4 address it may embed passes
///   this check on its own (metadata included: `["::/0"]` does not open
///   `2002:a9fe:a9fe::1`).
///
/// # Errors
/// The [`Reason`] the address is refused.
///
/// ```
/// use tollgate_handlers::http::{Reason, check_ip};
///
/// let loopback: ipnet::IpNet = "127.0.0.0/8".parse().unwrap();
/// assert_eq!(check_ip("127.0.0.1".parse().unwrap(), &[]), Err(Reason::Loopback));
/// assert_eq!(check_ip("::ffff:127.0.0.1".parse().unwrap(), &[]), Err(Reason::Loopback));
/// assert_eq!(check_ip("127.0.0.1".parse().unwrap(), &[loopback]), Ok(()));
/// assert_eq!(check_ip("93.184.215.14".parse().unwrap(), &[]), Ok(()));
/// let everything: ipnet::IpNet = "::/0".parse().unwrap();
/// assert_eq!(check_ip("64:ff9b::a9fe:a9fe".parse().unwrap(), &[everything]), Err(Reason::Metadata));
/// ```
pub fn check_ip(ip: IpAddr, allow: &[IpNet]) -> Result<(), Reason> {
    let ip = ip.to_canonical();
    let v6 = match ip {
        IpAddr::V4(v4) => return check_v4_allowing(v4, allow),
        IpAddr::V6(v6) => v6,
    };
    if NAT64_WELL_KNOWN.contains(&v6) {
        let [.., a, b, c, d] = v6.octets();
        return check_v4_allowing(Ipv4Addr::new(a, b, c, d), allow);
    }
    if let Some((embedding, embedded)) = embedded_ipv4(v6) {
        if !allowed(ip, allow) {
            return Err(Reason::EmbeddedIpv4(embedding));
        }
        return embedded
            .into_iter()
            .try_for_each(|v4| check_v4_allowing(v4, allow));
    }
    if allowed(ip, allow) {
        return Ok(());
    }
    if METADATA.contains(&ip) {
        return Err(Reason::Metadata);
    }
    check_v6(v6)
}

/// What to tell a person whose hook was refused `ip` for `reason`:
/// `; an admin file can allow it for admin and agent-config hooks with `network: {allow_cidrs:
/// ["127.0.0.0/8"]}``, naming the whole refused range the address is in (`127.0.0.0/8`,
/// `::1/128`, `10.0.0.0/8`, `fe80::/10`, …). Empty for refusals no allow-list should lift
/// casually, or that one entry cannot (metadata, reserved, documentation, multicast,
/// broadcast, unspecified addresses and the IPv6 forms refused whole).
pub(super) fn allow_advice(ip: IpAddr, reason: Reason) -> String {
    allow_hint(ip, reason).map_or_else(String::new, |net| {
        format!(
            "; an admin file can allow it for admin and agent-config hooks with \
             `network: {{allow_cidrs: [\"{net}\"]}}`"
        )
    })
}

/// The refused range of `ip` an operator may open for a local service; see [`allow_advice`].
fn allow_hint(ip: IpAddr, reason: Reason) -> Option<IpNet> {
    use Reason::{LinkLocal, Loopback, Private, SharedAddressSpace, UniqueLocal};
    if !matches!(
        reason,
        Loopback | Private | SharedAddressSpace | LinkLocal | UniqueLocal
    ) {
        return None;
    }
    // Judged as the guard judges it: IPv4-mapped and NAT64 well-known addresses as their IPv4.
    let ip = match ip.to_canonical() {
        IpAddr::V6(v6) if NAT64_WELL_KNOWN.contains(&v6) => {
            let [.., a, b, c, d] = v6.octets();
            IpAddr::V4(Ipv4Addr::new(a, b, c, d))
        }
        ip => ip,
    };
    match ip {
        IpAddr::V4(v4) => V4_REFUSED
            .iter()
            .find(|(net, r)| *r == reason && net.contains(&v4))
            .map(|(net, _)| IpNet::V4(*net)),
        IpAddr::V6(v6) => V6_REFUSED
            .iter()
            .find(|(net, r)| *r == reason && net.contains(&v6))
            .map(|(net, _)| IpNet::V6(*net)),
    }
}

fn check_v4_allowing(v4: Ipv4Addr, allow: &[IpNet]) -> Result<(), Reason> {
    let ip = IpAddr::V4(v4);
    if allowed(ip, allow) {
        return Ok(());
    }
    if METADATA.contains(&ip) {
        return Err(Reason::Metadata);
    }
    check_v4(v4)
}

/// The form refused whole that `ip` is, with every IPv4 address it may lead to. For NAT64
/// local-use, the position depends on the local prefix length (RFC 6052 §2.2: /48, /56, /64 or
/// /96), so every candidate is returned.
fn embedded_ipv4(ip: Ipv6Addr) -> Option<(Embedding, Vec<Ipv4Addr>)> {
    let o = ip.octets();
    let at = |i: [usize; 4]| Ipv4Addr::new(o[i[0]], o[i[1]], o[i[2]], o[i[3]]);
    let last = at([12, 13, 14, 15]);
    if IPV4_COMPATIBLE.contains(&ip) && u128::from(ip) > 1 {
        return Some((Embedding::Ipv4Compatible, vec![last]));
    }
    if NAT64_LOCAL_USE.contains(&ip) {
        let candidates = vec![
            at([6, 7, 9, 10]),
            at([7, 9, 10, 11]),
            at([9, 10, 11, 12]),
            last,
        ];
        return Some((Embedding::Nat64LocalUse, candidates));
    }
    if SIX_TO_FOUR.contains(&ip) {
        return Some((Embedding::SixToFour, vec![at([2, 3, 4, 5])]));
    }
    if TEREDO.contains(&ip) {
        let client = Ipv4Addr::from(!u32::from(last));
        return Some((Embedding::Teredo, vec![at([4, 5, 6, 7]), client]));
    }
    None
}

fn allowed(ip: IpAddr, allow: &[IpNet]) -> bool {
    let exact_only = METADATA.contains(&ip);
    allow
        .iter()
        .any(|net| net.contains(&ip) && (!exact_only || net.prefix_len() == net.max_prefix_len()))
}

fn check_v4(ip: Ipv4Addr) -> Result<(), Reason> {
    match V4_REFUSED.iter().find(|(net, _)| net.contains(&ip)) {
        Some((_, reason)) => Err(*reason),
        None => Ok(()),
    }
}

/// The IPv6 ranges, for an address that embeds no IPv4 address.
fn check_v6(ip: Ipv6Addr) -> Result<(), Reason> {
    if let Some((_, reason)) = V6_REFUSED.iter().find(|(net, _)| net.contains(&ip)) {
        return Err(*reason);
    }
    if V6_GLOBAL.contains(&ip) {
        Ok(())
    } else {
        Err(Reason::Reserved)
    }
}

#[cfg(test)]
#[path = "guard/tests.rs"]
mod tests;
