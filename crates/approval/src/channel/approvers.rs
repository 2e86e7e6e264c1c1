//! Who may decide from a platform: the platform's user ids, each deciding as a tollgate
//! approver name. Feishu/Lark and Slack configs share this shape.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

/// A channel's approvers, as configured: either a list of platform user ids (each decides
/// under its own id as approver name) or a map from platform user id to the approver name
/// the person decides as. The store then checks that name against each request's own
/// approvers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlatformApprovers {
    /// User ids that decide under their own id.
    Ids(Vec<String>),
    /// User id → approver name.
    Names(BTreeMap<String, String>),
}

impl PlatformApprovers {
    /// The approver name user `id` decides as, if they are listed.
    pub fn name_of(&self, id: &str) -> Option<&str> {
        match self {
            Self::Ids(ids) => ids.iter().find(|known| *known == id).map(String::as_str),
            Self::Names(names) => names.get(id).map(String::as_str),
        }
    }

    /// The user id that decides as approver `name`, if one does (the first in id order when
    /// several map to the same name).
    pub fn id_of(&self, name: &str) -> Option<&str> {
        match self {
            Self::Ids(ids) => ids.iter().find(|id| *id == name).map(String::as_str),
            Self::Names(names) => names
                .iter()
                .find(|(_, known)| *known == name)
                .map(|(id, _)| id.as_str()),
        }
    }

    /// Every (user id, approver name) pair, in id order for a map.
    pub fn pairs(&self) -> Vec<(&str, &str)> {
        match self {
            Self::Ids(ids) => ids.iter().map(|id| (id.as_str(), id.as_str())).collect(),
            Self::Names(names) => names
                .iter()
                .map(|(id, name)| (id.as_str(), name.as_str()))
                .collect(),
        }
    }
}

impl<'de> Deserialize<'de> for PlatformApprovers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ApproversVisitor)
    }
}

struct ApproversVisitor;

impl<'de> Visitor<'de> for ApproversVisitor {
    type Value = PlatformApprovers;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of user ids, or a map from user id to approver name")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut ids = Vec::new();
        while let Some(id) = seq.next_element::<String>()? {
            ids.push(id);
        }
        Ok(PlatformApprovers::Ids(ids))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut names = BTreeMap::new();
        while let Some((id, name)) = map.next_entry::<String, String>()? {
            if names.insert(id.clone(), name).is_some() {
                return Err(de::Error::custom(format!("user id {id} is listed twice")));
            }
        }
        Ok(PlatformApprovers::Names(names))
    }
}
