//! Who is writing and when: the identity and time each write records in its commit's trailers.

use jiff::Timestamp;

use crate::model::{MemoryId, to_millis};

/// Who is writing and when: recorded in the memory and in the commit's trailers.
#[derive(Clone, Debug, Default)]
pub struct WriteContext {
    /// The agent (e.g. `claude-code`).
    pub agent: Option<String>,
    /// The agent's session id.
    pub session: Option<String>,
    /// Overrides the author taken from the repository's git identity.
    pub author: Option<String>,
    /// The time to record (default: now). Lets tests and imports fix time.
    pub now: Option<Timestamp>,
}

impl WriteContext {
    pub(crate) fn now(&self) -> Timestamp {
        to_millis(self.now.unwrap_or_else(Timestamp::now))
    }

    pub(crate) fn trailers(&self, action: &str, ids: &[&MemoryId]) -> Vec<(String, String)> {
        let mut t = vec![("Lore-Action".to_string(), action.to_string())];
        for id in ids {
            t.push(("Lore-Memory".into(), id.to_string()));
        }
        // Who wrote is recorded as given, less any secret it holds (whatever the policy: a
        // name is never the place for one).
        let unsecret = crate::secrets::unsecret;
        if let Some(a) = &self.agent {
            t.push(("Lore-Agent".into(), unsecret(a)));
        }
        if let Some(s) = &self.session {
            t.push(("Lore-Session".into(), unsecret(s)));
        }
        t
    }
}
