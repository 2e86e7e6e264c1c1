//! The open platform's callback cryptography: the request signature and the AES-256-CBC
//! body. Comparisons of secrets and signatures run in constant time.

use aes::cipher::block_padding::Pkcs7;
use aes::cipher::{BlockDecryptMut, KeyIvInit};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
// `sha1` implements a newer `digest` than `sha2`: its trait comes in under another name.
use sha1::{Digest as _, Sha1};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

type Aes256CbcDec = cbc::Decryptor<aes::Aes256>;

/// AES's block size, also the IV's length.
const BLOCK: usize = 16;

/// Whether `signature` (hex, either case) is SHA-256 over `timestamp + nonce + encrypt_key +
/// body`: the signature of callbacks when an Encrypt Key is set.
pub(super) fn signature_matches(
    timestamp: &str,
    nonce: &str,
    encrypt_key: &str,
    body: &[u8],
    signature: &str,
) -> bool {
    let mut digest = Sha256::new();
    digest.update(timestamp.as_bytes());
    digest.update(nonce.as_bytes());
    digest.update(encrypt_key.as_bytes());
    digest.update(body);
    same_digest(&digest.finalize(), signature)
}

/// Whether `signature` (hex) is SHA-1 over `timestamp + nonce + verification_token + body`:
/// the signature of legacy card callbacks sent to a card request URL without encryption.
pub(super) fn legacy_signature_matches(
    timestamp: &str,
    nonce: &str,
    verification_token: &str,
    body: &[u8],
    signature: &str,
) -> bool {
    let mut digest = Sha1::new();
    digest.update(timestamp.as_bytes());
    digest.update(nonce.as_bytes());
    digest.update(verification_token.as_bytes());
    digest.update(body);
    same_digest(&digest.finalize(), signature)
}

fn same_digest(expected: &[u8], signature: &str) -> bool {
    match hex::decode(signature.trim()) {
        Ok(given) => given.len() == expected.len() && bool::from(given.ct_eq(expected)),
        Err(_) => false,
    }
}

/// Whether two secrets are equal, in time that does not depend on where they differ.
pub(super) fn same_secret(given: &str, expected: &str) -> bool {
    given.len() == expected.len() && bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

/// Why an `encrypt` field could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DecryptError {
    /// Not standard base64.
    Base64,
    /// Shorter than an IV and one block, or not whole blocks.
    Length,
    /// The plaintext's PKCS#7 padding is wrong (a wrong key, or a damaged body).
    Padding,
}

impl DecryptError {
    pub(super) fn describe(self) -> &'static str {
        match self {
            Self::Base64 => "the `encrypt` field is not base64",
            Self::Length => "the `encrypt` field is not an IV followed by whole AES blocks",
            Self::Padding => "the `encrypt` field does not decrypt with this Encrypt Key",
        }
    }
}

/// Decrypts an `encrypt` field: base64 of the IV (16 bytes) followed by AES-256-CBC
/// ciphertext, key SHA-256(`encrypt_key`), PKCS#7 padding.
///
/// # Errors
/// [`DecryptError`] for bad base64, a bad length or bad padding.
pub(super) fn decrypt(encrypt_key: &str, encoded: &str) -> Result<Vec<u8>, DecryptError> {
    let data = STANDARD
        .decode(encoded.trim())
        .map_err(|_| DecryptError::Base64)?;
    if data.len() < 2 * BLOCK || !data.len().is_multiple_of(BLOCK) {
        return Err(DecryptError::Length);
    }
    let (iv, ciphertext) = data.split_at(BLOCK);
    let key = Sha256::digest(encrypt_key.as_bytes());
    let cipher = Aes256CbcDec::new_from_slices(&key, iv).map_err(|_| DecryptError::Length)?;
    cipher
        .decrypt_padded_vec_mut::<Pkcs7>(ciphertext)
        .map_err(|_| DecryptError::Padding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_compare_as_digests() {
        let expected = hex::encode(Sha256::digest(b"1700000000n0nceKEY{}"));
        assert!(signature_matches(
            "1700000000",
            "n0nce",
            "KEY",
            b"{}",
            &expected
        ));
        let upper = expected.to_uppercase();
        assert!(signature_matches(
            "1700000000",
            "n0nce",
            "KEY",
            b"{}",
            &upper
        ));
        assert!(!signature_matches(
            "1700000001",
            "n0nce",
            "KEY",
            b"{}",
            &expected
        ));
        assert!(!signature_matches(
            "1700000000",
            "n0nce",
            "KEY",
            b"{}",
            "zz"
        ));
        assert!(!signature_matches(
            "1700000000",
            "n0nce",
            "KEY",
            b"{}",
            &expected[..10]
        ));
        let legacy = hex::encode(Sha1::digest(b"1n2tok{}"));
        assert!(legacy_signature_matches("1", "n2", "tok", b"{}", &legacy));
        assert!(!legacy_signature_matches(
            "1", "n2", "other", b"{}", &legacy
        ));
    }

    #[test]
    fn bad_fields_are_told_apart() {
        assert_eq!(decrypt("k", "!!"), Err(DecryptError::Base64));
        assert_eq!(
            decrypt("k", &STANDARD.encode([0u8; 20])),
            Err(DecryptError::Length)
        );
        assert_eq!(
            decrypt("k", &STANDARD.encode([0u8; 16])),
            Err(DecryptError::Length)
        );
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("ab", "abc"));
    }
}
