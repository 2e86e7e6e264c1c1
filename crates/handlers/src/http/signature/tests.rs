//! Signature format, parsing and secret specs.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;

use super::*;

const KEY: &[u8] = b"k3y";
const T: u64 = 1_700_000_000;

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn verify(header: &str, body: &[u8], now: u64) -> Result<(), SignatureError> {
    verify_signature(KEY, header, body, at(now), DEFAULT_TOLERANCE)
}

fn signed(body: &[u8]) -> String {
    Secret::new(KEY).unwrap().sign(T, body)
}

#[test]
fn matches_an_independent_hmac_sha256() {
    // echo -n '1700000000.{}' | openssl dgst -sha256 -hmac k3y
    let expected =
        "t=1700000000,v1=e2974d0d973957aed8182a7f1ef5690a188566c2c4620fc16bd97d7febcf5ef3";
    assert_eq!(signed(b"{}"), expected);
    assert_eq!(verify(expected, b"{}", T), Ok(()));
}

#[test]
fn the_window_is_three_hundred_seconds_either_way() {
    let header = signed(b"x");
    assert_eq!(verify(&header, b"x", T + 300), Ok(()));
    assert_eq!(verify(&header, b"x", T - 300), Ok(()));
    assert_eq!(
        verify(&header, b"x", T + 301),
        Err(SignatureError::OutsideTolerance { skew_secs: 301 })
    );
    assert_eq!(
        verify(&header, b"x", T - 301),
        Err(SignatureError::OutsideTolerance { skew_secs: 301 })
    );
}

#[test]
fn malformed_headers_are_rejected() {
    let v1 = signed(b"x").split_once(",v1=").unwrap().1.to_owned();
    let cases: Vec<(String, SignatureError)> = vec![
        (format!("t={T},v1="), SignatureError::BadSignature),
        (format!("t={T}"), SignatureError::MissingField("v1")),
        (format!("v1={v1}"), SignatureError::MissingField("t")),
        (format!("t=,v1={v1}"), SignatureError::BadTimestamp),
        (format!("t=+{T},v1={v1}"), SignatureError::BadTimestamp),
        (format!("t=-1,v1={v1}"), SignatureError::BadTimestamp),
        (format!("t={T}.0,v1={v1}"), SignatureError::BadTimestamp),
        (
            format!("t=99999999999999999999,v1={v1}"),
            SignatureError::BadTimestamp,
        ),
        (
            format!("t={T},v1={}", &v1[..62]),
            SignatureError::BadSignature,
        ),
        (format!("t={T},v1={v1}00"), SignatureError::BadSignature),
        (
            format!("t={T},v1={}zz", &v1[..62]),
            SignatureError::BadSignature,
        ),
        (
            format!("t={T},t={T},v1={v1}"),
            SignatureError::DuplicateField("t"),
        ),
        (
            format!("t={T},v1={v1},v1={v1}"),
            SignatureError::DuplicateField("v1"),
        ),
        (
            format!("t={T},v1={v1},v0=abc"),
            SignatureError::UnexpectedField("v0=abc".into()),
        ),
        (
            format!("t={T}, v1={v1}"),
            SignatureError::UnexpectedField(format!(" v1={v1}")),
        ),
        (
            format!("t={T},v1={v1},"),
            SignatureError::UnexpectedField(String::new()),
        ),
        (String::new(), SignatureError::MissingHeader),
    ];
    for (header, expected) in cases {
        assert_eq!(verify(&header, b"x", T), Err(expected), "{header}");
    }
    assert_eq!(
        verify(&format!("v1={v1},t={T}"), b"x", T),
        Ok(()),
        "either order"
    );
    assert_eq!(
        verify(&format!("t={T},v1={}", v1.to_uppercase()), b"x", T),
        Ok(()),
        "hex is case-insensitive"
    );
}

#[test]
fn an_empty_secret_never_signs_or_verifies() {
    assert!(matches!(Secret::new(b""), Err(HttpError::EmptySecret)));
    assert_eq!(
        verify_signature(b"", &signed(b"x"), b"x", at(T), DEFAULT_TOLERANCE),
        Err(SignatureError::EmptySecret)
    );
}

#[test]
fn secret_specs_are_one_environment_reference() {
    let lookup = |name: &str| (name == "HOOK_SECRET").then(|| "s3cret".to_owned());
    let secret = Secret::from_spec("${HOOK_SECRET}", lookup).unwrap();
    let header = secret.sign(T, b"x");
    assert_eq!(
        verify_signature(b"s3cret", &header, b"x", at(T), DEFAULT_TOLERANCE),
        Ok(())
    );
    assert_eq!(format!("{secret:?}"), "Secret(..)");

    for spec in [
        "s3cret",
        "$HOOK_SECRET",
        "${}",
        "${1X}",
        "${A-B}",
        "x${A}",
        "${A}${B}",
    ] {
        assert!(
            matches!(
                Secret::from_spec(spec, lookup),
                Err(HttpError::SecretNotEnvReference)
            ),
            "{spec}"
        );
    }
    let unset = Secret::from_spec("${MISSING}", lookup).unwrap_err();
    assert!(matches!(&unset, HttpError::SecretUnset(name) if name == "MISSING"));
    assert!(unset.to_string().contains("MISSING"));
    let empty = Secret::from_spec("${EMPTY}", |_| Some(String::new())).unwrap_err();
    assert!(matches!(empty, HttpError::SecretUnset(name) if name == "EMPTY"));
}

#[test]
fn from_env_reads_the_process_environment() {
    // Cargo sets CARGO_PKG_NAME for tests; nothing sets this long name.
    assert!(Secret::from_env("${CARGO_PKG_NAME}").is_ok());
    let error = Secret::from_env("${TOLLGATE_TEST_NEVER_SET_7F3A}").unwrap_err();
    assert!(error.to_string().contains("TOLLGATE_TEST_NEVER_SET_7F3A"));
}

proptest! {
    #[test]
    fn round_trips_and_any_changed_byte_fails(
        body in proptest::collection::vec(any::<u8>(), 0..256),
        // Whitespace-only keys are refused as empty (tested elsewhere).
        key in proptest::collection::vec(any::<u8>(), 1..80)
            .prop_filter("not whitespace only", |k| !k.iter().all(u8::is_ascii_whitespace)),
        t in 0_u64..=4_000_000_000_000,
        flip in any::<prop::sample::Index>(),
    ) {
        let header = Secret::new(&key).unwrap().sign(t, &body);
        prop_assert_eq!(verify_signature(&key, &header, &body, at(t), DEFAULT_TOLERANCE), Ok(()));
        if !body.is_empty() {
            let mut tampered = body.clone();
            tampered[flip.index(body.len())] ^= 1;
            prop_assert_eq!(
                verify_signature(&key, &header, &tampered, at(t), DEFAULT_TOLERANCE),
                Err(SignatureError::Mismatch)
            );
        }
        let mut other = key.clone();
        other[0] ^= 1;
        // `!` flipped is a space: a key left with whitespace only is refused as empty.
        let expected = if other.iter().all(u8::is_ascii_whitespace) {
            SignatureError::EmptySecret
        } else {
            SignatureError::Mismatch
        };
        prop_assert_eq!(
            verify_signature(&other, &header, &body, at(t), DEFAULT_TOLERANCE),
            Err(expected)
        );
    }

    #[test]
    fn arbitrary_headers_never_panic(header in ".{0,200}") {
        let _ = verify_signature(KEY, &header, b"x", at(T), DEFAULT_TOLERANCE);
    }
}

/// `"   "` or `"\n"` in the secret variable was accepted as a signing key.
#[test]
fn regression_a_key_flipped_to_whitespace_only_is_empty_not_a_mismatch() {
    let header = Secret::new(b"!").unwrap().sign(T, b"x");
    assert_eq!(
        verify_signature(b" ", &header, b"x", at(T), DEFAULT_TOLERANCE),
        Err(SignatureError::EmptySecret)
    );
}

#[test]
fn regression_whitespace_only_secrets_are_empty() {
    for blank in ["   ", "\n", " \t\r\n"] {
        let error = Secret::from_spec("${HOOK_SECRET}", |_| Some(blank.to_owned())).unwrap_err();
        assert!(
            matches!(&error, HttpError::SecretUnset(name) if name == "HOOK_SECRET"),
            "{blank:?}: {error:?}"
        );
        assert!(matches!(Secret::new(blank), Err(HttpError::EmptySecret)));
        assert_eq!(
            verify_signature(
                blank.as_bytes(),
                &signed(b"x"),
                b"x",
                at(T),
                DEFAULT_TOLERANCE
            ),
            Err(SignatureError::EmptySecret)
        );
    }
    assert!(
        Secret::from_spec("${S}", |_| Some(" k ".to_owned())).is_ok(),
        "used as is"
    );
}

/// `verify_signature` re-rendered `t` before computing the MAC: `t=000<t>` with a MAC over
/// `"<t>.body"` passed, and a MAC over the literal `"000<t>.body"` failed.
#[test]
fn regression_the_mac_covers_the_literal_t_text() {
    let mac_over = |text: &[u8]| {
        let mut mac = keyed(KEY).unwrap();
        mac.update(text);
        hex::encode(mac.finalize().into_bytes())
    };
    let rebuilt = mac_over(format!("{T}.x").as_bytes());
    let literal = mac_over(format!("000{T}.x").as_bytes());
    assert_eq!(
        verify(&format!("t=000{T},v1={rebuilt}"), b"x", T),
        Err(SignatureError::Mismatch)
    );
    assert_eq!(verify(&format!("t=000{T},v1={literal}"), b"x", T), Ok(()));
    assert_eq!(verify(&format!("t={T},v1={rebuilt}"), b"x", T), Ok(()));
}

#[test]
fn the_longest_timestamp_fits_the_stack_formatted_header() {
    let header = Secret::new(KEY).unwrap().sign(u64::MAX, b"x");
    let (t, v1) = header.split_once(",v1=").unwrap();
    assert_eq!(t, "t=18446744073709551615");
    assert_eq!(v1.len(), 64);
    assert!(
        v1.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
}
