//! Hostile-input tables and property tests for the SSRF guard.

#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;
use proptest::prelude::*;

use super::{Embedding, METADATA, Reason, V4_REFUSED, check_ip};

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn net(text: &str) -> IpNet {
    text.parse().unwrap()
}

fn check(text: &str) -> Result<(), Reason> {
    check_ip(ip(text), &[])
}

/// Every refused range: its first and last address are refused with the reason; the addresses
/// just outside it (where they are public) pass.
#[test]
fn refused_ranges_and_their_boundaries() {
    use Reason::*;
    let table: &[(&str, &str, Reason, &[&str])] = &[
        ("0.0.0.0", "0.255.255.255", Unspecified, &["1.0.0.0"]),
        (
            "10.0.0.0",
            "10.255.255.255",
            Private,
            &["9.255.255.255", "11.0.0.0"],
        ),
        (
            "100.64.0.0",
            "100.127.255.255",
            SharedAddressSpace,
            &["100.63.255.255", "100.128.0.0"],
        ),
        (
            "127.0.0.0",
            "127.255.255.255",
            Loopback,
            &["126.255.255.255", "128.0.0.0"],
        ),
        (
            "169.254.0.0",
            "169.254.255.255",
            LinkLocal,
            &["169.253.255.255", "169.255.0.0"],
        ),
        (
            "172.16.0.0",
            "172.31.255.255",
            Private,
            &["172.15.255.255", "172.32.0.0"],
        ),
        (
            "192.0.0.0",
            "192.0.0.255",
            Reserved,
            &["191.255.255.255", "192.0.1.0"],
        ),
        ("192.0.2.0", "192.0.2.255", Documentation, &["192.0.3.0"]),
        (
            "192.88.99.0",
            "192.88.99.255",
            Reserved,
            &["192.88.98.255", "192.88.100.0"],
        ),
        (
            "192.168.0.0",
            "192.168.255.255",
            Private,
            &["192.167.255.255", "192.169.0.0"],
        ),
        (
            "198.18.0.0",
            "198.19.255.255",
            Benchmarking,
            &["198.17.255.255", "198.20.0.0"],
        ),
        (
            "198.51.100.0",
            "198.51.100.255",
            Documentation,
            &["198.51.99.255", "198.51.101.0"],
        ),
        (
            "203.0.113.0",
            "203.0.113.255",
            Documentation,
            &["203.0.112.255", "203.0.114.0"],
        ),
        (
            "224.0.0.0",
            "239.255.255.255",
            Multicast,
            &["223.255.255.255"],
        ),
        ("240.0.0.0", "255.255.255.254", Reserved, &[]),
        ("255.255.255.255", "255.255.255.255", Broadcast, &[]),
        ("::", "::", Unspecified, &[]),
        ("::1", "::1", Loopback, &[]),
        (
            "::2",
            "::ffff:ffff",
            EmbeddedIpv4(Embedding::Ipv4Compatible),
            &[],
        ),
        (
            "64:ff9b:1::",
            "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
            EmbeddedIpv4(Embedding::Nat64LocalUse),
            &[],
        ),
        ("100::", "100::ffff:ffff:ffff:ffff", Reserved, &[]),
        (
            "2001::",
            "2001:0:ffff:ffff:ffff:ffff:ffff:ffff",
            EmbeddedIpv4(Embedding::Teredo),
            &[],
        ),
        (
            "2001:2::",
            "2001:2:0:ffff:ffff:ffff:ffff:ffff",
            Benchmarking,
            &[],
        ),
        (
            "2001:1::",
            "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
            Reserved,
            &["2001:200::"],
        ),
        (
            "2001:db8::",
            "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
            Documentation,
            &["2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::"],
        ),
        (
            "2002::",
            "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            EmbeddedIpv4(Embedding::SixToFour),
            &["2003::"],
        ),
        (
            "3fff::",
            "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
            Documentation,
            &["3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::"],
        ),
        (
            "5f00::",
            "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            Reserved,
            &[],
        ),
        (
            "fc00::",
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            UniqueLocal,
            &[],
        ),
        (
            "fe80::",
            "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            LinkLocal,
            &[],
        ),
        (
            "fec0::",
            "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            Private,
            &[],
        ),
        (
            "ff00::",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            Multicast,
            &[],
        ),
        (
            "4000::",
            "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            Reserved,
            &["3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
        ),
        (
            "::1:0:0",
            "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            Reserved,
            &["2000::"],
        ),
    ];
    for (first, last, reason, outside) in table {
        assert_eq!(check(first), Err(*reason), "{first}");
        assert_eq!(check(last), Err(*reason), "{last}");
        for address in *outside {
            assert_eq!(
                check(address),
                Ok(()),
                "{address} is outside {first}–{last}"
            );
        }
    }
}

#[test]
fn cloud_metadata_addresses_are_named() {
    for address in [
        "169.254.169.254",
        "169.254.170.2",
        "169.254.170.23",
        "100.100.100.200",
        "168.63.129.16",
        "192.0.0.192",
        "fd00:ec2::254",
        "fd00:ec2::23",
        "::ffff:169.254.169.254",
        "64:ff9b::169.254.169.254",
    ] {
        assert_eq!(check(address), Err(Reason::Metadata), "{address}");
    }
    assert_eq!(check("168.63.129.15"), Ok(()));
    assert_eq!(check("168.63.129.17"), Ok(()));
}

#[test]
fn ipv4_mapped_and_nat64_forms_are_checked_as_their_ipv4_address() {
    assert_eq!(check("::ffff:127.0.0.1"), Err(Reason::Loopback));
    assert_eq!(check("::ffff:7f00:1"), Err(Reason::Loopback));
    assert_eq!(check("::ffff:10.1.2.3"), Err(Reason::Private));
    assert_eq!(check("::ffff:0.0.0.0"), Err(Reason::Unspecified));
    assert_eq!(check("::ffff:8.8.8.8"), Ok(()));
    assert_eq!(check("64:ff9b::127.0.0.1"), Err(Reason::Loopback));
    assert_eq!(check("64:ff9b::192.168.1.1"), Err(Reason::Private));
    assert_eq!(check("64:ff9b::8.8.8.8"), Ok(()));
    // SIIT's IPv4-translated form ::ffff:0:a.b.c.d lies outside 2000::/3.
    assert_eq!(check("::ffff:0:8.8.8.8"), Err(Reason::Reserved));
    // Embedded forms refused whole, even around a public IPv4 address.
    assert_eq!(
        check("::8.8.8.8"),
        Err(Reason::EmbeddedIpv4(Embedding::Ipv4Compatible))
    );
    assert_eq!(
        check("2002:808:808::1"),
        Err(Reason::EmbeddedIpv4(Embedding::SixToFour))
    );
    assert_eq!(
        check("2002:7f00:1::1"),
        Err(Reason::EmbeddedIpv4(Embedding::SixToFour))
    );
    assert_eq!(
        check("2001:0:4136:e378:8000:63bf:3fff:fdd2"),
        Err(Reason::EmbeddedIpv4(Embedding::Teredo))
    );
}

#[test]
fn public_addresses_pass() {
    for address in [
        "1.1.1.1",
        "8.8.8.8",
        "93.184.215.14",
        "172.15.0.1",
        "192.169.0.1",
        "223.255.255.255",
        "2606:4700:4700::1111",
        "2a00:1450:4001:80e::200e",
        "2001:4860:4860::8888",
    ] {
        assert_eq!(check(address), Ok(()), "{address}");
    }
}

#[test]
fn the_allow_list_overrides_the_guard() {
    let loopback = [net("127.0.0.0/8")];
    assert_eq!(check_ip(ip("127.0.0.1"), &loopback), Ok(()));
    assert_eq!(check_ip(ip("127.255.0.9"), &loopback), Ok(()));
    assert_eq!(check_ip(ip("::ffff:127.0.0.1"), &loopback), Ok(()));
    assert_eq!(check_ip(ip("::1"), &loopback), Err(Reason::Loopback));
    assert_eq!(check_ip(ip("10.0.0.5"), &loopback), Err(Reason::Private));
    let v6 = [net("fd12:3456::/32")];
    assert_eq!(check_ip(ip("fd12:3456::1"), &v6), Ok(()));
    assert_eq!(check_ip(ip("fd12:3457::1"), &v6), Err(Reason::UniqueLocal));
}

#[test]
fn metadata_passes_only_an_allow_entry_naming_that_single_address() {
    let link_local = [net("169.254.0.0/16")];
    assert_eq!(check_ip(ip("169.254.1.1"), &link_local), Ok(()));
    assert_eq!(
        check_ip(ip("169.254.169.254"), &link_local),
        Err(Reason::Metadata)
    );
    let exact = [net("169.254.169.254/32")];
    assert_eq!(check_ip(ip("169.254.169.254"), &exact), Ok(()));
    let everything = [net("0.0.0.0/0"), net("::/0")];
    assert_eq!(
        check_ip(ip("fd00:ec2::254"), &everything),
        Err(Reason::Metadata)
    );
}

fn v6_in(prefix: Ipv6Addr, len: u32, host: u128) -> IpAddr {
    let mask = if len == 0 {
        0
    } else {
        u128::MAX << (128 - len)
    };
    IpAddr::V6(Ipv6Addr::from((u128::from(prefix) & mask) | (host & !mask)))
}

/// An independent reading of "not public" from the standard library's stable predicates.
fn std_says_special(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_unspecified()
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || v6.is_unique_local()
                || v6.is_unicast_link_local()
        }
    }
}

proptest! {
    #[test]
    fn nothing_std_calls_special_passes(bits in any::<u32>(), wide in any::<u128>()) {
        for address in [IpAddr::V4(Ipv4Addr::from(bits)), IpAddr::V6(Ipv6Addr::from(wide))] {
            if std_says_special(address) {
                prop_assert!(check_ip(address, &[]).is_err(), "{address}");
            }
        }
    }

    #[test]
    fn every_address_of_a_refused_ipv4_range_is_refused(index in 0..V4_REFUSED.len(), host in any::<u32>()) {
        let (net, _) = V4_REFUSED[index];
        let mask = u32::MAX.checked_shl(32 - u32::from(net.prefix_len())).unwrap_or(0);
        let address = Ipv4Addr::from((u32::from(net.network()) & mask) | (host & !mask));
        prop_assert!(check_ip(IpAddr::V4(address), &[]).is_err(), "{address}");
    }

    #[test]
    fn mapped_and_nat64_forms_answer_like_their_ipv4_address(bits in any::<u32>(), allow_loopback in any::<bool>()) {
        let allow: Vec<IpNet> = if allow_loopback { vec![net("127.0.0.0/8")] } else { vec![] };
        let v4 = Ipv4Addr::from(bits);
        let expected = check_ip(IpAddr::V4(v4), &allow);
        prop_assert_eq!(check_ip(IpAddr::V6(v4.to_ipv6_mapped()), &allow), expected);
        let nat64 = v6_in(ip_v6("64:ff9b::"), 96, u128::from(bits));
        prop_assert_eq!(check_ip(nat64, &allow), expected);
    }

    #[test]
    fn tunnel_forms_are_refused_whatever_they_embed(host in any::<u128>()) {
        for (prefix, len) in [("::", 96), ("64:ff9b:1::", 48), ("2002::", 16), ("2001::", 32)] {
            let address = v6_in(ip_v6(prefix), len, host);
            if address == ip("::") || address == ip("::1") {
                continue;
            }
            prop_assert!(
                matches!(check_ip(address, &[]), Err(Reason::EmbeddedIpv4(_))),
                "{address}"
            );
        }
    }

    #[test]
    fn an_allow_list_lets_its_own_non_metadata_addresses_through(bits in any::<u32>(), len in 8_u8..=32) {
        let address = Ipv4Addr::from(bits);
        let allow = [IpNet::new(IpAddr::V4(address), len).unwrap().trunc()];
        let result = check_ip(IpAddr::V4(address), &allow);
        if len == 32 || result != Err(Reason::Metadata) {
            prop_assert_eq!(result, Ok(()));
        }
    }
}

fn ip_v6(text: &str) -> Ipv6Addr {
    text.parse().unwrap()
}

/// With wide allow-lists, the IPv6 form was allow-listed before its embedded IPv4 address was
/// looked at: NAT64 and 6to4 forms of the metadata endpoints came back `Ok`.
#[test]
fn regression_nat64_and_6to4_forms_of_metadata_are_refused_under_wide_allow_lists() {
    for allow in [
        vec![net("0.0.0.0/0"), net("::/0")],
        vec![net("::/0")],
        vec![net("64:ff9b::/96")],
        vec![net("2002::/16"), net("169.254.0.0/16")],
    ] {
        for address in [
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::6464:64c8",
            "2002:a9fe:a9fe::1",
        ] {
            assert!(
                check_ip(ip(address), &allow).is_err(),
                "{address} under {allow:?}"
            );
        }
        assert_eq!(
            check_ip(ip("64:ff9b::a9fe:a9fe"), &allow),
            Err(Reason::Metadata)
        );
    }
    // The v4 checks apply to the embedded address too: `::/0` does not open loopback.
    let v6_everything = [net("::/0")];
    assert_eq!(
        check_ip(ip("64:ff9b::127.0.0.1"), &v6_everything),
        Err(Reason::Loopback)
    );
    assert_eq!(
        check_ip(ip("2002:7f00:1::1"), &v6_everything),
        Err(Reason::Loopback)
    );
    assert_eq!(check_ip(ip("2002:808:808::1"), &v6_everything), Ok(()));
    // Naming the metadata address itself is what opens it.
    let exact = [net("169.254.169.254/32"), net("2002::/16")];
    assert_eq!(check_ip(ip("64:ff9b::a9fe:a9fe"), &exact), Ok(()));
    assert_eq!(check_ip(ip("2002:a9fe:a9fe::1"), &exact), Ok(()));
}

/// Every IPv6 form that can carry `v4`, with `noise` filling the bits the form leaves free.
fn embeddings(v4: Ipv4Addr, noise: u128) -> Vec<IpAddr> {
    let bits = u128::from(u32::from(v4));
    let v6 = |prefix: &str, len: u32, host: u128| v6_in(ip_v6(prefix), len, host);
    let low80 = noise & ((1 << 80) - 1);
    let low64 = noise & ((1 << 64) - 1);
    let mid = noise & (((1 << 32) - 1) << 32);
    vec![
        IpAddr::V6(v4.to_ipv6_mapped()),
        v6("64:ff9b::", 96, bits),
        IpAddr::V6(v4.to_ipv6_compatible()),
        v6("2002::", 16, (bits << 80) | low80),
        v6("2001::", 32, (bits << 64) | low64),
        v6("2001::", 32, mid | (bits ^ 0xffff_ffff)),
        v6("64:ff9b:1::", 48, (noise & !((1 << 32) - 1)) | bits),
        v6(
            "64:ff9b:1::",
            48,
            (bits & 0xffff_0000) << 48 | (bits & 0xffff) << 40,
        ),
        v6(
            "64:ff9b:1::",
            48,
            (bits & 0xff00_0000) << 40 | (bits & 0x00ff_ffff) << 32,
        ),
        v6("64:ff9b:1::", 48, bits << 24),
    ]
}

/// Networks an operator might allow, none naming a metadata address alone.
const WIDE: &[&str] = &[
    "0.0.0.0/0",
    "::/0",
    "64:ff9b::/96",
    "64:ff9b:1::/48",
    "2002::/16",
    "2001::/32",
    "::/96",
    "::ffff:0:0/96",
    "169.254.0.0/16",
    "100.64.0.0/10",
    "168.63.0.0/16",
    "192.0.0.0/24",
    "fd00:ec2::/32",
];

proptest! {
    #[test]
    fn regression_every_embedding_of_a_metadata_address_is_refused(
        index in 0..METADATA.len(),
        chosen in proptest::collection::vec(0..WIDE.len(), 0..=WIDE.len()),
        noise in any::<u128>(),
        name_the_form in any::<bool>(),
    ) {
        let IpAddr::V4(metadata) = METADATA[index] else { return Ok(()) };
        for address in embeddings(metadata, noise) {
            let mut allow: Vec<IpNet> = chosen.iter().map(|&i| net(WIDE[i])).collect();
            if name_the_form {
                allow.push(IpNet::from(address)); // the IPv6 form itself, as a /128
            }
            prop_assert!(check_ip(address, &allow).is_err(), "{address} under {allow:?}");
        }
    }
}

/// The forms [`embeddings`] builds really carry their address where the guard looks for it.
#[test]
fn the_embedding_forms_are_read_back() {
    let v6_everything = [net("::/0")];
    for address in embeddings(Ipv4Addr::new(127, 0, 0, 1), 0) {
        assert!(check_ip(address, &v6_everything).is_err(), "{address}");
    }
    // Teredo and NAT64 local-use carry several candidate addresses; the zero bits around
    // 8.8.8.8 read as other (refused) addresses, so the IPv4 side is opened wide here.
    let everything = [net("::/0"), net("0.0.0.0/0")];
    for address in embeddings(Ipv4Addr::new(8, 8, 8, 8), 0) {
        assert_eq!(check_ip(address, &everything), Ok(()), "{address}");
    }
}

#[test]
fn the_advice_names_the_refused_range_or_nothing() {
    let advised = |text: &str| {
        let address = ip(text);
        let reason = check_ip(address, &[]).unwrap_err();
        super::allow_hint(address, reason).map(|n| n.to_string())
    };
    for (address, range) in [
        ("127.0.0.1", "127.0.0.0/8"),
        ("::1", "::1/128"),
        ("::ffff:10.1.2.3", "10.0.0.0/8"),
        ("64:ff9b::ac10:1", "172.16.0.0/12"),
        ("192.168.7.7", "192.168.0.0/16"),
        ("100.64.0.1", "100.64.0.0/10"),
        ("fe80::1", "fe80::/10"),
        ("fd12::1", "fc00::/7"),
    ] {
        assert_eq!(advised(address).as_deref(), Some(range), "{address}");
    }
    for address in [
        "169.254.169.254",
        "240.0.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "2002:7f00:1::1",
    ] {
        assert_eq!(advised(address), None, "{address}");
    }
}

proptest! {
    #[test]
    fn following_the_advice_lets_the_address_through(bits in any::<u32>(), wide in any::<u128>()) {
        for address in [IpAddr::V4(Ipv4Addr::from(bits)), IpAddr::V6(Ipv6Addr::from(wide))] {
            let Err(reason) = check_ip(address, &[]) else { continue };
            if let Some(range) = super::allow_hint(address, reason) {
                prop_assert_eq!(check_ip(address, &[range]), Ok(()), "{}", address);
            }
        }
    }
}
