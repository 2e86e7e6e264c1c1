//! Feishu / Lark: the open platform's API a custom app calls ([`start`]), and the callbacks
//! the platform posts when a user clicks a card button ([`Callbacks`]).
//!
//! Written from the platform's documentation, independently of tollgate's channel, so each
//! side checks the other:
//!
//! - Access token: <https://open.feishu.cn/document/ukTMukTMukTM/ukDNz4SO0MjL5QzM/auth-v3/auth/tenant_access_token_internal>
//! - Send a message: <https://open.feishu.cn/document/uAjLw4CM/ukTMukTMukTM/reference/im-v1/message/create>
//! - Update a card: <https://open.feishu.cn/document/uAjLw4CM/ukTMukTMukTM/reference/im-v1/message/patch>
//! - Card callbacks: <https://open.feishu.cn/document/uAjLw4CM/ukzMukzMukzM/feishu-cards/card-callback-communication>
//! - Encryption and signatures: <https://open.feishu.cn/document/uAjLw4CM/ukTMukTMukTM/event-subscription-guide/callback-subscription/receive-and-handle-callbacks>
//! - The legacy card request URL and its SHA-1 signature: <https://open.feishu.cn/document/ukTMukTMukTM/uYzMxEjL2MTMx4iNzETM>
//!
//! Routes of the API stand-in:
//!
//! ```text
//! POST  /open-apis/auth/v3/tenant_access_token/internal   {app_id, app_secret} → {code: 0,
//!                                                         tenant_access_token, expire}
//! POST  /open-apis/im/v1/messages?receive_id_type=…       a message; `uuid` de-duplicates
//! PATCH /open-apis/im/v1/messages/{message_id}            {content}: replaces a card
//! anything else                                           404 {code, msg}
//! ```
//!
//! Both message routes want `Authorization: Bearer <a token it issued>` and a JSON content
//! type; a missing or unknown token gets code 99991661 / 99991663, as the platform answers.
//! Business errors come back as HTTP 400 with a non-zero `code`.

mod callbacks;
mod platform;

pub use callbacks::{Callbacks, Delivery, Encoded};
pub use platform::{Button, Message, OpenPlatform, buttons, start};

/// The code the platform answers for an access token it does not accept.
pub const INVALID_TOKEN: i64 = 99_991_663;
/// The code the platform answers for a request without an access token.
pub const MISSING_TOKEN: i64 = 99_991_661;
