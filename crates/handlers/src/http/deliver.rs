//! One delivery: the signed POST and its per-delivery headers.

use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use reqwest::Client;
use reqwest::header::{self, HeaderValue};
use tollgate_core::HookError;
use tollgate_protocol::{Event, Outcome};
use url::Url;

use super::response;
use super::signature::{EVENT_HEADER, ID_HEADER, SIGNATURE_HEADER, Secret};

/// What to send.
pub(super) struct Delivery<'a> {
    pub(super) client: &'a Client,
    pub(super) url: &'a Url,
    pub(super) secret: Option<&'a Secret>,
    pub(super) headers: &'a reqwest::header::HeaderMap,
    pub(super) event: &'a Event,
    pub(super) body: Vec<u8>,
    pub(super) response_cap: usize,
}

/// POSTs the body and reads a 2xx answer's body with `parse`.
///
/// # Cancel safety
/// Dropping the future drops the request and its connection; nothing is left running.
pub(super) async fn deliver(
    delivery: Delivery<'_>,
    parse: impl FnOnce(&[u8]) -> Result<Outcome, HookError>,
) -> Result<Outcome, HookError> {
    let event = match delivery.event {
        Event::Custom(_) => HeaderValue::try_from(delivery.event.to_string()),
        builtin => HeaderValue::try_from(builtin.as_str()),
    };
    let mut request = delivery
        .client
        .post(delivery.url.clone())
        .header(header::CONTENT_TYPE, "application/json")
        .header(ID_HEADER, &delivery_id()[..])
        .header(EVENT_HEADER, event.map_err(HookError::msg)?)
        .headers(delivery.headers.clone());
    if let Some(secret) = delivery.secret {
        let signature = secret.signature(unix_now(), &delivery.body);
        request = request.header(SIGNATURE_HEADER, signature.as_bytes());
    }
    let response = request
        .body(delivery.body)
        .send()
        .await
        .map_err(response::transport_error)?;
    response::interpret(response, delivery.response_cap, parse).await
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// A new delivery id in UUID v4 text form, formatted on the stack: 122 bits from a keyed
/// SipHash (std's [`RandomState`], keyed from the OS's randomness once per process) of a
/// process-wide counter, so ids are as unlikely to repeat as random UUIDs, across processes too.
pub(super) fn delivery_id() -> [u8; 36] {
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let keys = KEYS.get_or_init(RandomState::new);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let bits = (u128::from(keys.hash_one((n, 0_u8))) << 64) | u128::from(keys.hash_one((n, 1_u8)));
    let id = (bits & !(0xf << 76) & !(0b11 << 62)) | (0x4 << 76) | (0b10 << 62); // v4, RFC 9562 variant
    uuid_text(id)
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lowercase.
fn uuid_text(id: u128) -> [u8; 36] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = [b'-'; 36];
    let digits = (0..36).filter(|at| !matches!(at, 8 | 13 | 18 | 23));
    for (nibble, at) in (0..32).rev().zip(digits) {
        text[at] = HEX[((id >> (nibble * 4)) & 0xf) as usize];
    }
    text
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn delivery_ids_are_distinct_uuid_v4_strings() {
        let ids: HashSet<String> = (0..10_000)
            .map(|_| String::from_utf8(delivery_id().to_vec()).unwrap())
            .collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(50) {
            assert_eq!(id.len(), 36, "{id}");
            assert_eq!(&id[14..15], "4", "{id}");
            assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        }
    }

    #[test]
    fn uuid_text_groups_the_128_bits_8_4_4_4_12_most_significant_first() {
        let text = uuid_text(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210);
        assert_eq!(&text, b"01234567-89ab-cdef-fedc-ba9876543210");
    }
}
