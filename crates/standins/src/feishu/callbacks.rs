//! What the platform posts to an app's callback URL: a user's click on a card button
//! (`card.action.trigger`, schema 2.0, or the legacy flat shape), the `url_verification`
//! challenge, or another event; encrypted and signed as the platform does it, with knobs that
//! break one thing at a time.
//!
//! - With an Encrypt Key the body is `{"encrypt": base64(iv ‖ AES-256-CBC(PKCS#7(json)))}`
//!   under the key SHA-256(Encrypt Key), and the headers `X-Lark-Request-Timestamp` (Unix
//!   seconds), `X-Lark-Request-Nonce` and `X-Lark-Signature` = hex SHA-256(timestamp ‖ nonce
//!   ‖ Encrypt Key ‖ body).
//! - Without one the body is the plain JSON; the verification token inside it is the proof.
//!   The legacy flat card callback carries no token, so it is signed with hex SHA-1(timestamp
//!   ‖ nonce ‖ verification token ‖ body) instead.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use aes::cipher::block_padding::{NoPadding, Pkcs7};
use aes::cipher::{BlockEncryptMut, KeyIvInit};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha1::Digest as _;
use sha2::{Digest, Sha256};

type Aes256CbcEnc = cbc::Encryptor<aes::Aes256>;

/// The token a [`Delivery::wrong_token`] carries.
const WRONG_TOKEN: &str = "not-the-verification-token";

/// An app's callback settings, as the platform knows them.
#[derive(Debug, Clone)]
pub struct Callbacks {
    verification_token: String,
    encrypt_key: Option<String>,
    app_id: String,
}

impl Callbacks {
    /// Callbacks for an app with this Verification Token and, if set, Encrypt Key.
    pub fn new(verification_token: &str, encrypt_key: Option<&str>) -> Self {
        Self {
            verification_token: verification_token.to_owned(),
            encrypt_key: encrypt_key.map(str::to_owned),
            app_id: "cli_standin".to_owned(),
        }
    }

    /// User `open_id` clicks a button whose value is `value` (schema 2.0).
    pub fn click(&self, value: &Value, open_id: &str) -> Delivery {
        let payload = json!({
            "schema": "2.0",
            "header": {
                "event_id": random_id(),
                "token": self.verification_token,
                "create_time": (unix_seconds() * 1_000_000).to_string(),
                "event_type": "card.action.trigger",
                "tenant_key": "tenant_standin",
                "app_id": self.app_id,
            },
            "event": {
                "operator": {
                    "tenant_key": "tenant_standin",
                    "user_id": "standin_user",
                    "open_id": open_id,
                    "union_id": format!("on_{open_id}"),
                },
                "token": format!("c-{}", random_id()),
                "action": {"value": value, "tag": "button"},
                "host": "im_message",
                "context": {"open_message_id": "om_standin_000001", "open_chat_id": "oc_standin"},
            },
        });
        self.delivery(payload, Shape::Schema2)
    }

    /// User `open_id` clicks a button whose value is `value` (the legacy flat shape of the
    /// message card request URL).
    pub fn legacy_click(&self, value: &Value, open_id: &str) -> Delivery {
        let payload = json!({
            "open_id": open_id,
            "user_id": "standin_user",
            "open_message_id": "om_standin_000001",
            "open_chat_id": "oc_standin",
            "tenant_key": "tenant_standin",
            "token": format!("c-{}", random_id()),
            "action": {"value": value, "tag": "button"},
        });
        self.delivery(payload, Shape::Legacy)
    }

    /// The check the platform makes when the callback URL is saved.
    pub fn url_verification(&self, challenge: &str) -> Delivery {
        let payload = json!({
            "challenge": challenge,
            "token": self.verification_token,
            "type": "url_verification",
        });
        self.delivery(payload, Shape::Verification)
    }

    /// A schema 2.0 event of another type (`im.message.receive_v1`, …).
    pub fn event(&self, event_type: &str) -> Delivery {
        let payload = json!({
            "schema": "2.0",
            "header": {
                "event_id": random_id(),
                "token": self.verification_token,
                "create_time": (unix_seconds() * 1_000_000).to_string(),
                "event_type": event_type,
                "tenant_key": "tenant_standin",
                "app_id": self.app_id,
            },
            "event": {},
        });
        self.delivery(payload, Shape::Schema2)
    }

    fn delivery(&self, payload: Value, shape: Shape) -> Delivery {
        let mut iv = [0u8; 16];
        // A zero IV (if the OS has no randomness) still encrypts and decrypts.
        let _ = getrandom::fill(&mut iv);
        Delivery {
            payload,
            shape,
            verification_token: self.verification_token.clone(),
            encrypt_key: self.encrypt_key.clone(),
            timestamp: None,
            nonce: random_id(),
            iv,
            signature: SignatureKnob::Valid,
            body: BodyKnob::Intact,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Schema2,
    Legacy,
    Verification,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SignatureKnob {
    Valid,
    Wrong,
    Missing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKnob {
    Intact,
    BadBase64,
    BadCiphertext,
    BadPadding,
    WrongKey,
}

/// One callback request, ready to encode or post.
#[derive(Debug, Clone)]
pub struct Delivery {
    payload: Value,
    shape: Shape,
    verification_token: String,
    encrypt_key: Option<String>,
    timestamp: Option<i64>,
    nonce: String,
    iv: [u8; 16],
    signature: SignatureKnob,
    body: BodyKnob,
}

/// A delivery's bytes on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Encoded {
    /// Header names (lower case) and values.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Vec<u8>,
}

impl Encoded {
    /// The value of header `name` (lower case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

impl Delivery {
    /// The callback's JSON before encryption.
    pub fn payload(&self) -> &Value {
        &self.payload
    }

    /// Sets the delivery's id (schema 2.0 `header.event_id`; legacy: the card `token`), as a
    /// retried delivery repeats it.
    pub fn event_id(mut self, id: &str) -> Self {
        let slot = match self.shape {
            Shape::Schema2 => self.payload.pointer_mut("/header/event_id"),
            Shape::Legacy => self.payload.pointer_mut("/token"),
            Shape::Verification => None,
        };
        if let Some(slot) = slot {
            *slot = json!(id);
        }
        self
    }

    /// Sets the operator's `union_id` (`on_<open_id>` by default).
    pub fn union_id(mut self, id: &str) -> Self {
        if let Some(slot) = self.payload.pointer_mut("/event/operator/union_id") {
            *slot = json!(id);
        }
        self
    }

    /// Sets the message the click came from.
    pub fn message_id(mut self, id: &str) -> Self {
        let pointer = match self.shape {
            Shape::Legacy => "/open_message_id",
            _ => "/event/context/open_message_id",
        };
        if let Some(slot) = self.payload.pointer_mut(pointer) {
            *slot = json!(id);
        }
        self
    }

    /// Dates the request `unix_seconds` (the default is the time of encoding).
    pub fn at(mut self, unix_seconds: i64) -> Self {
        self.timestamp = Some(unix_seconds);
        self
    }

    /// Carries a verification token that is not the app's (the legacy shape: signs with it).
    pub fn wrong_token(mut self) -> Self {
        let slot = match self.shape {
            Shape::Schema2 => self.payload.pointer_mut("/header/token"),
            Shape::Verification => self.payload.pointer_mut("/token"),
            Shape::Legacy => None,
        };
        match slot {
            Some(slot) => *slot = json!(WRONG_TOKEN),
            None => WRONG_TOKEN.clone_into(&mut self.verification_token),
        }
        self
    }

    /// Sends a signature that does not match the body.
    pub fn bad_signature(mut self) -> Self {
        self.signature = SignatureKnob::Wrong;
        self
    }

    /// Sends no signature headers.
    pub fn unsigned(mut self) -> Self {
        self.signature = SignatureKnob::Missing;
        self
    }

    /// An `encrypt` field that is not base64 (signed as sent).
    pub fn bad_base64(mut self) -> Self {
        self.body = BodyKnob::BadBase64;
        self
    }

    /// An `encrypt` field whose ciphertext is not whole AES blocks (signed as sent).
    pub fn bad_ciphertext(mut self) -> Self {
        self.body = BodyKnob::BadCiphertext;
        self
    }

    /// An `encrypt` field whose plaintext padding is not PKCS#7 (signed as sent).
    pub fn bad_padding(mut self) -> Self {
        self.body = BodyKnob::BadPadding;
        self
    }

    /// Encrypts under another key (signed with the right one, as sent).
    pub fn wrong_encrypt_key(mut self) -> Self {
        self.body = BodyKnob::WrongKey;
        self
    }

    /// The headers and body as the platform would send them.
    pub fn encode(&self) -> Encoded {
        let plain = self.payload.to_string().into_bytes();
        let body = match &self.encrypt_key {
            Some(key) => json!({"encrypt": self.encrypt(key, &plain)})
                .to_string()
                .into_bytes(),
            None => plain,
        };
        let mut headers = vec![(
            "content-type".to_owned(),
            "application/json; charset=utf-8".to_owned(),
        )];
        headers.extend(self.signature_headers(&body));
        Encoded { headers, body }
    }

    /// Posts the delivery to `url`; the answer's status and body.
    ///
    /// # Errors
    ///
    /// The request could not be sent or its answer read.
    pub async fn post(&self, url: &str) -> Result<(u16, String), reqwest::Error> {
        let encoded = self.encode();
        let mut request = reqwest::Client::builder()
            .no_proxy()
            .build()?
            .post(url)
            .body(encoded.body);
        for (name, value) in &encoded.headers {
            request = request.header(name, value);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        Ok((status, response.text().await?))
    }

    fn encrypt(&self, key: &str, plain: &[u8]) -> String {
        let key = match self.body {
            BodyKnob::WrongKey => Sha256::digest(format!("{key}-but-wrong")),
            _ => Sha256::digest(key.as_bytes()),
        };
        let Ok(cipher) = Aes256CbcEnc::new_from_slices(&key, &self.iv) else {
            return String::new();
        };
        let ciphertext = match self.body {
            BodyKnob::BadPadding => cipher.encrypt_padded_vec_mut::<NoPadding>(&bad_padding(plain)),
            _ => cipher.encrypt_padded_vec_mut::<Pkcs7>(plain),
        };
        let mut data = self.iv.to_vec();
        data.extend_from_slice(&ciphertext);
        match self.body {
            BodyKnob::BadBase64 => "%%% this is not base64 %%%".to_owned(),
            BodyKnob::BadCiphertext => {
                data.truncate(data.len() - 3);
                STANDARD.encode(data)
            }
            _ => STANDARD.encode(data),
        }
    }

    fn signature_headers(&self, body: &[u8]) -> Vec<(String, String)> {
        let sign_key = match (&self.encrypt_key, self.shape) {
            (Some(key), _) => Some((key.as_str(), false)),
            (None, Shape::Legacy) => Some((self.verification_token.as_str(), true)),
            (None, _) => None,
        };
        let Some((key, legacy)) = sign_key else {
            return Vec::new();
        };
        if self.signature == SignatureKnob::Missing {
            return Vec::new();
        }
        let timestamp = self.timestamp.unwrap_or_else(unix_seconds).to_string();
        let signed: &[u8] = match self.signature {
            SignatureKnob::Wrong => b"{\"some\":\"other body\"}",
            _ => body,
        };
        let signature = if legacy {
            let mut digest = sha1::Sha1::new();
            digest.update(format!("{timestamp}{}{key}", self.nonce).as_bytes());
            digest.update(signed);
            hex::encode(digest.finalize())
        } else {
            let mut digest = Sha256::new();
            digest.update(format!("{timestamp}{}{key}", self.nonce).as_bytes());
            digest.update(signed);
            hex::encode(digest.finalize())
        };
        vec![
            ("x-lark-request-timestamp".to_owned(), timestamp),
            ("x-lark-request-nonce".to_owned(), self.nonce.clone()),
            ("x-lark-signature".to_owned(), signature),
        ]
    }
}

/// `plain` padded to whole blocks with a final byte that PKCS#7 never writes (0).
fn bad_padding(plain: &[u8]) -> Vec<u8> {
    let pad = 16 - plain.len() % 16;
    let mut padded = plain.to_vec();
    padded.resize(plain.len() + pad, 0);
    padded
}

fn unix_seconds() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
}

/// A hex id unique within the process.
fn random_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    let number = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{number:08x}{}", hex::encode(bytes))
}
