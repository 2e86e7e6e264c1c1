//! Bearer tokens and their roles.
//!
//! Each configured token has a name (the name decisions are recorded under) and roles. The
//! server keeps only SHA-256 digests of tokens: a presented token is hashed and compared with
//! every configured digest in constant time ([`subtle`]), so neither the comparison's time nor
//! an early exit tells an attacker how much of a token was right.

use std::str::FromStr;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::AppState;
use crate::error::ApiError;

/// Shortest plain token accepted, in bytes: a bearer token approves production actions.
pub const MIN_TOKEN_LEN: usize = 16;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Starts and cancels runs, and files requests (`tollgate hook --server`).
    Runner,
    /// Lists, shows and decides confirmation requests.
    Approver,
    /// Everything.
    Admin,
}

impl Role {
    const ALL: [(&'static str, Role); 3] = [
        ("runner", Role::Runner),
        ("approver", Role::Approver),
        ("admin", Role::Admin),
    ];
}

impl FromStr for Role {
    type Err = String;

    /// # Errors
    /// An unknown role, with the one probably meant.
    fn from_str(text: &str) -> Result<Self, String> {
        if let Some((_, role)) = Self::ALL.iter().find(|(name, _)| *name == text) {
            return Ok(*role);
        }
        let hint = Self::ALL
            .iter()
            .map(|(name, _)| (strsim::jaro_winkler(text, name), *name))
            .filter(|(similarity, _)| *similarity >= 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map_or_else(String::new, |(_, name)| {
                format!(" (did you mean `{name}`?)")
            });
        Err(format!(
            "unknown role{hint}; the roles are `runner`, `approver` and `admin`"
        ))
    }
}

/// One configured token.
#[derive(Debug, Clone)]
pub struct Token {
    name: String,
    digest: [u8; 32],
    roles: Vec<Role>,
}

impl Token {
    /// A token named `name` whose SHA-256 is `digest`.
    ///
    /// # Errors
    /// An empty name, or no roles.
    pub fn new(name: String, digest: [u8; 32], roles: Vec<Role>) -> Result<Self, String> {
        if name.trim().is_empty() {
            return Err("`name` must not be empty".into());
        }
        if roles.is_empty() {
            return Err(format!("`{name}` has no roles (runner, approver, admin)"));
        }
        Ok(Self {
            name,
            digest,
            roles,
        })
    }

    /// The SHA-256 of a plain token.
    ///
    /// # Errors
    /// A token shorter than [`MIN_TOKEN_LEN`] bytes (an unset variable set to `""`, say).
    pub fn digest_of(token: &str) -> Result<[u8; 32], String> {
        if token.len() < MIN_TOKEN_LEN {
            return Err(format!(
                "too short: a token needs at least {MIN_TOKEN_LEN} characters"
            ));
        }
        Ok(Sha256::digest(token.as_bytes()).into())
    }

    /// A digest written as 64 hexadecimal digits.
    ///
    /// # Errors
    /// Anything else.
    pub fn parse_digest(text: &str) -> Result<[u8; 32], String> {
        let mut digest = [0; 32];
        hex::decode_to_slice(text.trim(), &mut digest)
            .map_err(|_| "must be 64 hexadecimal digits (`sha256sum` of the token)".to_owned())?;
        Ok(digest)
    }

    /// The name decisions are recorded under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the token has `role` (an admin has every role).
    pub fn has(&self, role: Role) -> bool {
        self.roles.iter().any(|r| *r == role || *r == Role::Admin)
    }

    /// The token, when it has the runner role.
    ///
    /// # Errors
    /// A 403 naming the token.
    pub fn runner(&self) -> Result<&Self, ApiError> {
        if self.has(Role::Runner) {
            Ok(self)
        } else {
            Err(ApiError::forbidden(format!(
                "the token `{}` lacks the runner role",
                self.name
            )))
        }
    }
}

/// The configured tokens.
#[derive(Debug, Clone)]
pub struct Tokens(Vec<Token>);

impl Tokens {
    /// The tokens, checked.
    ///
    /// # Errors
    /// No tokens, two with the same name, or two with the same token.
    pub fn new(tokens: Vec<Token>) -> Result<Self, String> {
        if tokens.is_empty() {
            return Err("`tokens`: no tokens, so nobody could use the API".into());
        }
        for (i, token) in tokens.iter().enumerate() {
            for other in &tokens[..i] {
                if other.name == token.name {
                    return Err(format!("`tokens`: two tokens are named `{}`", token.name));
                }
                if other.digest == token.digest {
                    return Err(format!(
                        "`tokens`: `{}` and `{}` have the same token",
                        other.name, token.name
                    ));
                }
            }
        }
        Ok(Self(tokens))
    }

    /// The names of the tokens that may approve (role `approver` or `admin`): who decides the
    /// asks of runs this server starts when no `approval.approvers` list says otherwise.
    pub fn approver_names(&self) -> Vec<String> {
        self.0
            .iter()
            .filter(|t| t.has(Role::Approver))
            .map(|t| t.name().to_owned())
            .collect()
    }

    /// The token `presented` is, if any. Compares its digest with every configured digest,
    /// in constant time, without stopping at a match.
    pub fn find(&self, presented: &str) -> Option<&Token> {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found = None;
        for token in &self.0 {
            if bool::from(token.digest.ct_eq(&digest)) {
                found = Some(token);
            }
        }
        found
    }
}

/// The token a request came with; rejects the request with 401 when it has none or an
/// unknown one.
#[derive(Debug, Clone)]
pub struct Caller(pub Token);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let header = parts.headers.get(AUTHORIZATION).ok_or_else(|| {
            ApiError::unauthorized("this route needs `Authorization: Bearer TOKEN`")
        })?;
        let token = header
            .to_str()
            .ok()
            .and_then(|h| h.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .ok_or_else(|| {
                ApiError::unauthorized("the Authorization header must be `Bearer TOKEN`")
            })?;
        state
            .tokens
            .find(token)
            .map(|t| Self(t.clone()))
            .ok_or_else(|| ApiError::unauthorized("unknown token"))
    }
}

/// A caller with the `approver` (or `admin`) role; 401 without a known token, 403 without the
/// role.
#[derive(Debug, Clone)]
pub struct Approver(pub Token);

impl FromRequestParts<AppState> for Approver {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Caller(token) = Caller::from_request_parts(parts, state).await?;
        if !token.has(Role::Approver) {
            return Err(ApiError::forbidden(format!(
                "the token `{}` lacks the approver role",
                token.name()
            )));
        }
        Ok(Self(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(name: &str, secret: &str, roles: &[Role]) -> Token {
        Token::new(
            name.into(),
            Token::digest_of(secret).unwrap(),
            roles.to_vec(),
        )
        .unwrap()
    }

    #[test]
    fn a_presented_token_finds_its_entry_and_nothing_else_does() {
        let tokens = Tokens::new(vec![
            token("ops-lead", "0123456789abcdef-ops", &[Role::Approver]),
            token("ci", "0123456789abcdef-ci", &[Role::Runner]),
        ])
        .unwrap();
        assert_eq!(tokens.find("0123456789abcdef-ci").unwrap().name(), "ci");
        assert_eq!(
            tokens.find("0123456789abcdef-ops").unwrap().name(),
            "ops-lead"
        );
        for wrong in ["", "0123456789abcdef-op", "0123456789abcdef-opsx", "ci"] {
            assert!(tokens.find(wrong).is_none(), "{wrong}");
        }
    }

    #[test]
    fn a_hashed_token_matches_its_plain_form() {
        let hex = hex::encode(Sha256::digest(b"a-long-enough-secret"));
        let digest = Token::parse_digest(&hex).unwrap();
        let tokens = Tokens::new(vec![
            Token::new("auditor".into(), digest, vec![Role::Admin]).unwrap(),
        ])
        .unwrap();
        assert_eq!(
            tokens.find("a-long-enough-secret").unwrap().name(),
            "auditor"
        );
        assert!(Token::parse_digest("abc").is_err());
        assert!(Token::parse_digest(&"zz".repeat(32)).is_err());
    }

    #[test]
    fn admins_have_every_role_and_others_only_theirs() {
        let admin = token("a", "0123456789abcdef", &[Role::Admin]);
        let runner = token("r", "0123456789abcdef", &[Role::Runner]);
        assert!(admin.has(Role::Approver) && admin.has(Role::Runner));
        assert!(runner.has(Role::Runner) && !runner.has(Role::Approver));
    }

    #[test]
    fn duplicate_names_or_tokens_and_short_tokens_are_refused() {
        let a = token("a", "0123456789abcdef", &[Role::Admin]);
        let same_token = token("b", "0123456789abcdef", &[Role::Admin]);
        let same_name = token("a", "fedcba9876543210", &[Role::Admin]);
        assert!(Tokens::new(vec![a.clone(), same_token]).is_err());
        assert!(Tokens::new(vec![a, same_name]).is_err());
        assert!(Tokens::new(vec![]).is_err());
        assert!(Token::digest_of("short").is_err());
        assert!(Token::new("x".into(), [0; 32], vec![]).is_err());
    }

    #[test]
    fn unknown_roles_suggest_the_one_meant() {
        assert_eq!("approver".parse::<Role>(), Ok(Role::Approver));
        let err = "aprover".parse::<Role>().unwrap_err();
        assert!(err.contains("did you mean `approver`"), "{err}");
        assert!(!"root".parse::<Role>().unwrap_err().contains("did you mean"));
    }
}
