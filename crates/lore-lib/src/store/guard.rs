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

    /// The policy set by [`Store::set_secret_policy`], if any (not the configured one).
    pub fn secret_policy_override(&self) -> Option<SecretPolicy> {
        self.secret_policy
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
    /// the policy would not store ([`secrets::surviving`]).
    pub(crate) fn guard(&self, what: &str, bytes: &[u8]) -> Result<()> {
        self.guard_carried(what, bytes, &mut || Ok(Vec::new()))
    }

    /// Like [`Store::guard`], except that a secret the write only carries over from a text the
    /// store already holds (`prior`: the versions this write replaces, removes or merges; read
    /// only when something is found) is not new, and passes: forgetting, superseding or merging
    /// a memory kept under `warn` must not need the secret gone first.
    pub(crate) fn guard_carried(
        &self,
        what: &str,
        bytes: &[u8],
        prior: &mut dyn FnMut() -> Result<Vec<Vec<u8>>>,
    ) -> Result<()> {
        // Bytes that are not UTF-8 are scanned as far as they read as text.
        let text = String::from_utf8_lossy(bytes);
        let text = text.as_ref();
        let policy = self.secret_policy()?;
        let found = secrets::surviving(text, what, policy);
        if found.is_empty() {
            return Ok(());
        }
        let prior = prior()?;
        let carried = |secret: &str| {
            prior
                .iter()
                .any(|p| p.windows(secret.len()).any(|w| w == secret.as_bytes()))
        };
        let new: Vec<_> = found
            .into_iter()
            .filter(|f| !carried(&text[f.span.0..f.span.1]))
            .collect();
        if new.is_empty() {
            Ok(())
        } else {
            Err(secrets::refusal(new, policy))
        }
    }

    /// Writes a blob through the guard (a blob the repository already has is not written
    /// again, nor scanned: it is no new text).
    pub(crate) fn write_blob(&self, what: &str, content: &[u8]) -> Result<Oid> {
        self.write_blob_carried(what, content, &mut || Ok(Vec::new()))
    }

    /// [`Store::write_blob`] for content copied from texts the store holds (`prior`).
    pub(crate) fn write_blob_carried(
        &self,
        what: &str,
        content: &[u8],
        prior: &mut dyn FnMut() -> Result<Vec<Vec<u8>>>,
    ) -> Result<Oid> {
        let id = Oid::hash_object(ObjectType::Blob, content)?;
        if self.repo.odb()?.exists(id) {
            return Ok(id);
        }
        self.guard_carried(what, content, prior)?;
        Ok(self.repo.blob(content)?)
    }
}
