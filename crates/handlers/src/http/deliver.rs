//! One delivery: the signed POST and its per-delivery headers.

use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use reqwest::{Client, header};
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
    pub(super) event: &'a Event,
    pub(super) body: Vec<u8>,
    pub(super) response_cap: usize,
}

/// POSTs the body and interprets the answer.
///
/// # Cancel safety
/// Dropping the future drops the request and its connection; nothing is left running.
pub(super) async fn deliver(delivery: Delivery<'_>) -> Result<Outcome, HookError> {
    let mut request = delivery
        .client
        .post(delivery.url.clone())
        .header(header::CONTENT_TYPE, "application/json")
        .header(ID_HEADER, delivery_id())
        .header(EVENT_HEADER, delivery.event.to_string());
    if let Some(secret) = delivery.secret {
        request = request.header(SIGNATURE_HEADER, secret.sign(unix_now(), &delivery.body));
    }
    let response = request
        .body(delivery.body)
        .send()
        .await
        .map_err(response::transport_error)?;
    response::interpret(response, delivery.response_cap).await
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// A new delivery id in UUID v4 text form: 122 bits from a keyed SipHash (std's
/// [`RandomState`], keyed from the OS's randomness once per process) of a process-wide
/// counter, so ids are as unlikely to repeat as random UUIDs, across processes too.
pub(super) fn delivery_id() -> String {
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let keys = KEYS.get_or_init(RandomState::new);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let bits = (u128::from(keys.hash_one((n, 0_u8))) << 64) | u128::from(keys.hash_one((n, 1_u8)));
    let id = (bits & !(0xf << 76) & !(0b11 << 62)) | (0x4 << 76) | (0b10 << 62); // v4, RFC 9562 variant
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        id >> 96,
        (id >> 80) & 0xffff,
        (id >> 64) & 0xffff,
        (id >> 48) & 0xffff,
        id & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn delivery_ids_are_distinct_uuid_v4_strings() {
        let ids: HashSet<String> = (0..10_000).map(|_| delivery_id()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(50) {
            assert_eq!(id.len(), 36, "{id}");
            assert_eq!(&id[14..15], "4", "{id}");
            assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        }
    }
}
