//! The secret choke point: every blob, commit message and journal line lore writes passes the
//! scanner here, under the store's policy, after each field was screened where it was made.

use git2::{ObjectType, Oid};

use super::Store;
use crate::error::{Error, Result};
use crate::secrets::{self, POLICY_CONFIG, SecretPolicy};

impl Store {
    /// Overrides the secret policy for this store's writes (else `git config lore.secrets`,
    /// else redact).
    pub fn set_secret_policy(&mut self, policy: Option<SecretPolicy>) {
        self.secret_policy = policy;
    }

    /// The secret policy in force: the override, else `git config lore.secrets`, else redact. A
    /// configured value that is not a policy is an error, so a typo never silently weakens
    /// protection.
    pub fn secret_policy(&self) -> Result<SecretPolicy> {
        if let Some(p) = self.secret_policy {
            return Ok(p);
        }
        match self.config_string(POLICY_CONFIG) {
            None => Ok(SecretPolicy::default()),
            Some(v) => SecretPolicy::parse(&v).map_err(|_| Error::Invalid {
                what: "git config lore.secrets",
                value: v,
                reason: "expected block, redact or warn".into(),
            }),
        }
    }

    /// Refuses bytes about to be written (`what` names them in the error) that still hold what
    /// the policy would not store ([`secrets::refuse_surviving`]). Bytes that are not text are
    /// not lore's to write and are refused too.
    pub(crate) fn guard(&self, what: &str, bytes: &[u8]) -> Result<()> {
        let text = std::str::from_utf8(bytes).map_err(|_| Error::Invalid {
            what: "write",
            value: what.to_string(),
            reason: "lore writes only UTF-8 text".into(),
        })?;
        secrets::refuse_surviving(text, what, self.secret_policy()?)
    }

    /// Writes a blob through the guard (a blob the repository already has is not written
    /// again, nor scanned: it is no new text).
    pub(crate) fn write_blob(&self, what: &str, content: &[u8]) -> Result<Oid> {
        let id = Oid::hash_object(ObjectType::Blob, content)?;
        if self.repo.odb()?.exists(id) {
            return Ok(id);
        }
        self.guard(what, content)?;
        Ok(self.repo.blob(content)?)
    }
}
