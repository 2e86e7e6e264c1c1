//! Signed-in sessions of the approvals page, held in memory.
//!
//! A session is a random id (32 bytes from the operating system, hex) that the browser keeps
//! in a cookie, and on the server the token it signed in with, a CSRF token (random too) and
//! an expiry. The map is keyed by the SHA-256 of the id, so looking an id up tells nothing
//! through timing about the ids that exist. Sessions end at expiry, at sign-out, or when the
//! server restarts (people sign in again).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::auth::Token;

/// How long a sign-in lasts.
pub const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);
/// Most sessions held at once; past it, the one expiring soonest is dropped.
const MAX_SESSIONS: usize = 4096;

/// One signed-in browser.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// The token it signed in with: decisions are recorded under its name.
    pub token: Token,
    /// The hidden field every form of the session must send back.
    pub csrf: String,
}

impl Session {
    /// Whether `presented` is this session's CSRF token (compared in constant time).
    pub fn csrf_matches(&self, presented: &str) -> bool {
        bool::from(self.csrf.as_bytes().ct_eq(presented.as_bytes()))
    }
}

/// A line the next page shows once: what the last form did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Flash {
    /// It worked.
    Done(String),
    /// It was refused, and why.
    Refused(String),
}

struct Entry {
    session: Session,
    expires: Instant,
    flash: Option<Flash>,
}

/// The sessions of the approvals page.
pub struct Sessions {
    ttl: Duration,
    map: Mutex<HashMap<[u8; 32], Entry>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the ids: they are credentials.
        f.debug_struct("Sessions")
            .field("ttl", &self.ttl)
            .field("count", &self.lock().len())
            .finish()
    }
}

impl Sessions {
    /// No sessions yet; each one will last `ttl`.
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// How long a session lasts.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Starts a session for `token`: its id (for the cookie) and the session.
    ///
    /// # Errors
    /// The operating system gave no random bytes.
    pub(crate) fn open(&self, token: Token) -> Result<(String, Session), getrandom::Error> {
        let id = random_hex()?;
        let session = Session {
            token,
            csrf: random_hex()?,
        };
        let now = Instant::now();
        let mut map = self.lock();
        map.retain(|_, e| e.expires > now);
        if map.len() >= MAX_SESSIONS
            && let Some(oldest) = map.iter().min_by_key(|(_, e)| e.expires).map(|(k, _)| *k)
        {
            map.remove(&oldest);
        }
        let entry = Entry {
            session: session.clone(),
            expires: now + self.ttl,
            flash: None,
        };
        map.insert(key(&id), entry);
        Ok((id, session))
    }

    /// The live session `id` names, if any; an expired one is dropped.
    pub(crate) fn get(&self, id: &str) -> Option<Session> {
        let key = key(id);
        let mut map = self.lock();
        let entry = map.get(&key)?;
        if entry.expires <= Instant::now() {
            map.remove(&key);
            return None;
        }
        Some(entry.session.clone())
    }

    /// Ends session `id`.
    pub(crate) fn close(&self, id: &str) {
        self.lock().remove(&key(id));
    }

    /// Leaves `flash` for the next page of session `id`.
    pub(crate) fn set_flash(&self, id: &str, flash: Flash) {
        if let Some(entry) = self.lock().get_mut(&key(id)) {
            entry.flash = Some(flash);
        }
    }

    /// Takes the flash left for session `id`.
    pub(crate) fn take_flash(&self, id: &str) -> Option<Flash> {
        self.lock().get_mut(&key(id)).and_then(|e| e.flash.take())
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<[u8; 32], Entry>> {
        // Nothing panics while holding the lock; if something did, the map is still whole.
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn key(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

fn random_hex() -> Result<String, getrandom::Error> {
    let mut bytes = [0; 32];
    getrandom::fill(&mut bytes)?;
    Ok(hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Role;

    fn token() -> Token {
        Token::new("ops-lead".into(), [7; 32], vec![Role::Approver]).unwrap()
    }

    #[test]
    fn an_opened_session_is_found_by_its_id_and_by_nothing_else() {
        let sessions = Sessions::new(SESSION_TTL);
        let (id, session) = sessions.open(token()).unwrap();
        assert_eq!(id.len(), 64);
        assert_ne!(id, session.csrf);
        assert_eq!(sessions.get(&id).unwrap().token.name(), "ops-lead");
        assert!(sessions.get(&session.csrf).is_none());
        assert!(sessions.get(&id[..63]).is_none());
        assert!(sessions.get("").is_none());
        sessions.close(&id);
        assert!(sessions.get(&id).is_none());
    }

    #[test]
    fn an_expired_session_is_gone() {
        let sessions = Sessions::new(Duration::ZERO);
        let (id, _) = sessions.open(token()).unwrap();
        assert!(sessions.get(&id).is_none());
    }

    #[test]
    fn csrf_tokens_match_only_themselves_and_differ_per_session() {
        let sessions = Sessions::new(SESSION_TTL);
        let (_, a) = sessions.open(token()).unwrap();
        let (_, b) = sessions.open(token()).unwrap();
        assert!(a.csrf_matches(&a.csrf.clone()));
        assert!(!a.csrf_matches(&b.csrf));
        assert!(!a.csrf_matches(""));
        assert!(!a.csrf_matches(&a.csrf[1..]));
    }

    #[test]
    fn a_flash_is_shown_once() {
        let sessions = Sessions::new(SESSION_TTL);
        let (id, _) = sessions.open(token()).unwrap();
        sessions.set_flash(&id, Flash::Done("approved".into()));
        assert_eq!(
            sessions.take_flash(&id),
            Some(Flash::Done("approved".into()))
        );
        assert_eq!(sessions.take_flash(&id), None);
    }
}
