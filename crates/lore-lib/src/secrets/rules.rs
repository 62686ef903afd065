//! The secret scanner's rules: each credential format with its needles and pattern (compiled
//! on first need) and what a match's value must also be to count, and the tests that tell a
//! random secret from strings that only look random (placeholders, code, hashes, public keys
//! and certificates, encoded text and images).

use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::{LazyLock, OnceLock};

use regex::{Captures, Match, Regex};

/// A rule: a name and a pattern whose `secret` group (or `dq`, `sq` or `bare` group, or whole
/// match) is the secret, and what that value must be to count. The pattern is compiled the
/// first time a text could match it: every match holds one of its needles (and `:` or `=` when
/// it is an assignment), so most texts never pay for compiling most rules.
pub(super) struct Rule {
    pub(super) name: &'static str,
    needles: Needles,
    assignment: bool,
    source: Cow<'static, str>,
    value: Value,
    pattern: OnceLock<Regex>,
}

/// Strings one of which every match of a rule contains.
enum Needles {
    /// As written.
    Exact(&'static [&'static str]),
    /// Ignoring case (lower-case needles, for `(?i)` rules), looked for in [`fold_case`]'s copy
    /// of the text.
    Folded(&'static [&'static str]),
}

/// What the value of a match must also be to count as a secret.
#[derive(Clone, Copy)]
enum Value {
    /// Whatever the pattern matched (`<private>` spans).
    Any,
    /// A generated credential: not a documented placeholder, and with a random part's variety.
    Generated,
    /// A generated credential that also passes its format's own check.
    Shaped(fn(&str) -> bool),
    /// A generated credential found by the key it is assigned to: the key names a credential
    /// and the value mixes letters and digits.
    Keyed,
    /// A secret someone chose (a password): not a reference to one, nor a placeholder.
    Chosen,
    /// A pasted token: not a reference, a placeholder, code, nor a bare word.
    Token,
    /// The value of a password, secret or token assignment ([`is_assigned_literal`]).
    Assigned,
    /// A private-key block: its body holds key material, not a placeholder.
    KeyBlock,
}

impl Rule {
    pub(super) fn may_match(&self, text: &str, folded: &OnceCell<String>) -> bool {
        if self.assignment && !text.contains([':', '=']) {
            return false;
        }
        match self.needles {
            Needles::Exact(needles) => needles.iter().any(|n| text.contains(n)),
            Needles::Folded(needles) => {
                let folded = folded.get_or_init(|| fold_case(text));
                needles.iter().any(|n| folded.contains(n))
            }
        }
    }

    pub(super) fn pattern(&self) -> &Regex {
        self.pattern
            .get_or_init(|| Regex::new(&self.source).expect("secret rule patterns are valid"))
    }

    /// The secret in one match of the pattern, or `None` when its value does not count.
    pub(super) fn secret<'t>(&self, caps: &Captures<'t>) -> Option<Match<'t>> {
        let secret = ["secret", "dq", "sq", "bare"]
            .iter()
            .find_map(|g| caps.name(g))
            .or_else(|| caps.get(0))?;
        let value = secret.as_str();
        let counts = match self.value {
            Value::Any => true,
            Value::Generated => !is_made_up(value),
            Value::Shaped(check) => !is_made_up(value) && check(value),
            Value::Keyed => {
                !is_made_up(value) && names_a_credential(caps) && mixes_letters_and_digits(value)
            }
            Value::Chosen => !is_reference_or_placeholder(value),
            Value::Token => !is_placeholder(value) && !is_code_or_word(value),
            Value::Assigned => is_assigned_literal(caps, value),
            Value::KeyBlock => holds_key_material(value),
        };
        counts.then_some(secret)
    }
}

/// `text` in lower case as `(?i)` patterns see it: ASCII letters lowered, and the two other
/// letters that fold to ASCII ones (`ſ`, the Kelvin sign) read as `s` and `k`.
fn fold_case(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    text.chars()
        .map(|c| match c {
            'ſ' => 's',
            '\u{212A}' => 'k',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The rule name used for `<private>…</private>` spans.
pub const PRIVATE_RULE: &str = "private-span";
/// The rule name used for the generic high-entropy detector.
pub const HIGH_ENTROPY_RULE: &str = "high-entropy-string";

/// What may follow a generated token: the end of the text or a character no token holds.
const TOKEN_END: &str = r"(?:$|[^A-Za-z0-9_-])";

/// What may follow a value found by its key: the end of the text, a character no value holds,
/// or a full stop ending the sentence.
const VALUE_END: &str = r"(?:$|[^A-Za-z0-9_~+/=.-]|\.(?:[ \t\r\n]|$))";

fn rule(
    name: &'static str,
    needles: Needles,
    assignment: bool,
    source: impl Into<Cow<'static, str>>,
    value: Value,
) -> Rule {
    Rule {
        name,
        needles,
        assignment,
        source: source.into(),
        value,
        pattern: OnceLock::new(),
    }
}

/// A rule for a generated credential known by its prefix or shape: `pattern` from a word
/// boundary to the end of the token. The whole of it is the secret unless it names a `secret`
/// group.
fn generated(
    name: &'static str,
    needles: &'static [&'static str],
    pattern: &str,
    value: Value,
) -> Rule {
    let source = if pattern.contains("(?P<secret>") {
        format!(r"\b(?:{pattern}){TOKEN_END}")
    } else {
        format!(r"\b(?P<secret>{pattern}){TOKEN_END}")
    };
    rule(name, Needles::Exact(needles), false, source, value)
}

/// A rule for a credential known by the service its key names (`TWILIO_AUTH_TOKEN=…`,
/// `"algolia_api_key": "…"`, `heroku api key is …`): one of `services` (lower case) starting the
/// key, at most three more words, `=`, `:`, `=>`, `:=` or `is`, then `value` (matched ignoring
/// case), all on one line.
fn keyed(name: &'static str, services: &'static [&'static str], value: &str) -> Rule {
    let names: Vec<String> = services.iter().map(|s| regex::escape(s)).collect();
    let source = format!(
        r#"(?i)(?:\b|_)(?P<key>(?:{})[A-Za-z0-9_.-]*(?:[ \t]+[A-Za-z0-9_.-]+){{0,3}}?)["']?[ \t]*(?:=>|:=|[:=]|[ \t]is)[ \t]*["'`]?(?P<secret>{value}){VALUE_END}"#,
        names.join("|")
    );
    rule(name, Needles::Folded(services), false, source, Value::Keyed)
}

/// Provider formats first, then generic ones: the order is the precedence on overlap.
pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let mut rules = private_rules();
    rules.extend(cloud_rules());
    rules.extend(
        FORMATS
            .iter()
            .map(|&(name, needles, pattern)| generated(name, needles, pattern, Value::Generated)),
    );
    rules.extend(shaped_rules());
    rules.extend(
        KEYED
            .iter()
            .map(|&(name, services, value)| keyed(name, services, value)),
    );
    rules.extend(config_file_rules());
    rules.extend(generic_rules());
    rules
});

/// `<private>` spans and private keys in every armour: PEM (any kind, also with `\n` escapes as
/// in JSON), SSH2, PuTTY, and PEM encoded again in base64 (a kubeconfig's `client-key-data`).
fn private_rules() -> Vec<Rule> {
    vec![
        rule(
            PRIVATE_RULE,
            Needles::Folded(&["<private>"]),
            false,
            r"(?is)<private>.*?(?:</private>|\z)",
            Value::Any,
        ),
        rule(
            "private-key",
            Needles::Exact(&["-----BEGIN"]),
            false,
            r"-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----(?:\s|\\[nr])*(?:[A-Za-z-]+:[^\r\n\\]*(?:\s|\\[nr])+)*[A-Za-z0-9+/=]{20}(?s:.*?)(?:-----END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            Value::KeyBlock,
        ),
        rule(
            "private-key",
            Needles::Exact(&["---- BEGIN SSH2"]),
            false,
            r"---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----(?:\s+[A-Za-z-]+:[^\r\n]*)*\s+[A-Za-z0-9+/=]{20}(?s:.*?)(?:---- END SSH2 (?:ENCRYPTED )?PRIVATE KEY ----|\z)",
            Value::KeyBlock,
        ),
        rule(
            "private-key",
            Needles::Exact(&["PuTTY-User-Key-File-"]),
            false,
            r"PuTTY-User-Key-File-[0-9]:(?s:.*?)Private-Lines:[ \t]*[0-9]+[ \t]*\r?\n(?:[A-Za-z0-9+/=]+[ \t]*(?:\r?\n|\z))+",
            Value::KeyBlock,
        ),
        generated(
            "private-key",
            &["LS0tLS1CRUdJTi"],
            r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}",
            Value::Shaped(decodes_to_a_private_key),
        ),
    ]
}

/// Cloud credentials whose formats need more than a prefix: AWS secret keys and GCP key ids by
/// their key, Azure storage keys in connection strings, Azure client secrets by key or shape.
fn cloud_rules() -> Vec<Rule> {
    vec![
        rule(
            "aws-secret-access-key",
            Needles::Folded(&["aws"]),
            true,
            r#"(?i)\baws_?(?:secret_?(?:access_?)?key|secret)\b["']?[ \t]*[:=][ \t]*["']?(?P<secret>[A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])"#,
            Value::Generated,
        ),
        rule(
            "gcp-service-account-key-id",
            Needles::Exact(&["\"private_key_id\""]),
            true,
            r#""private_key_id"[ \t]*:[ \t]*"(?P<secret>[0-9a-f]{40})""#,
            Value::Generated,
        ),
        rule(
            "azure-storage-key",
            Needles::Folded(&["accountkey", "sharedaccesskey"]),
            true,
            r"(?i)\b(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<secret>[A-Za-z0-9+/]{40,88}={0,2})",
            Value::Generated,
        ),
        rule(
            "azure-client-secret",
            Needles::Folded(&["secret"]),
            true,
            r#"(?i)\b(?:azure|az)_?(?:client_?)?secret\b["']?[ \t]*[:=][ \t]*["']?(?P<secret>[A-Za-z0-9~._\-]{32,44})"#,
            Value::Generated,
        ),
        // Entra ID client secrets: three characters, a digit, `Q~`, then 31 to 34 more.
        rule(
            "azure-client-secret",
            Needles::Exact(&["Q~"]),
            false,
            r"(?:^|[^A-Za-z0-9_~.-])(?P<secret>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])",
            Value::Generated,
        ),
    ]
}

/// Generated formats with a check of their own: Discord bot tokens (their first part is a user
/// id in base64) and Vault's legacy `s.` tokens (letters and digits).
fn shaped_rules() -> Vec<Rule> {
    vec![
        generated(
            "discord-token",
            &["MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"],
            r"(?:M[Tjz]|N[DTjz]|O[DT])[A-Za-z0-9_-]{21,23}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}",
            Value::Shaped(starts_with_an_encoded_user_id),
        ),
        generated(
            "vault-token",
            &["s."],
            r"s\.[A-Za-z0-9]{24}",
            Value::Shaped(mixes_letters_and_digits),
        ),
    ]
}

/// Credentials in the files and commands that hold them: `.netrc`, `.pgpass`, `mysql -p`,
/// kubeconfig tokens, NuGet and Sidekiq configuration.
fn config_file_rules() -> Vec<Rule> {
    vec![
        rule(
            "kubeconfig-token",
            Needles::Exact(&["token"]),
            true,
            r#"(?m)^[ \t]*(?:-[ \t]+)?(?:token|access-token|id-token|refresh-token|access_token|refresh_token|id_token)[ \t]*:[ \t]*["']?(?P<secret>[A-Za-z0-9._~+/=:-]{16,})["']?[ \t\r]*$"#,
            Value::Shaped(mixes_letters_and_digits),
        ),
        rule(
            "netrc-password",
            Needles::Exact(&["password"]),
            false,
            r"(?:\bmachine[ \t]+\S+|\bdefault)(?:\s+(?:login|account|port)[ \t]+\S+)*\s+password[ \t]+(?P<bare>\S+)",
            Value::Chosen,
        ),
        // host:port:database:user:password, a whole line.
        rule(
            "pgpass-password",
            Needles::Exact(&[":"]),
            false,
            r"(?m)^(?:\*|[A-Za-z0-9-]*[A-Za-z][A-Za-z0-9.-]*|[0-9]{1,3}(?:\.[0-9]{1,3}){3}):(?:[0-9]{1,5}|\*):[A-Za-z0-9_.*-]+:[A-Za-z0-9_.@*-]+:(?P<bare>(?:[^:\s\\]|\\.){4,})[ \t\r]*$",
            Value::Chosen,
        ),
        rule(
            "mysql-password",
            Needles::Exact(&["mysql", "mariadb"]),
            false,
            r#"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mariadb|mariadb-dump)\b[^\r\n|;&]*?[ \t](?:-p|--password=)(?:"(?P<dq>[^"\r\n]+)"|'(?P<sq>[^'\r\n]+)'|(?P<bare>[^\s"'`|;&<>(),]{3,}))"#,
            Value::Chosen,
        ),
        rule(
            "nuget-config-password",
            Needles::Folded(&["password"]),
            true,
            r#"(?i)<add[ \t]+key[ \t]*=[ \t]*"(?:ClearText)?Password"[ \t]+value[ \t]*=[ \t]*"(?P<dq>[^"\r\n]+)""#,
            Value::Chosen,
        ),
        rule(
            "sidekiq-secret",
            Needles::Folded(&["contribsys"]),
            true,
            r#"(?i)\bBUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM["']?[ \t]*[:=][ \t]*["']?(?P<secret>[a-f0-9]{8}:[a-f0-9]{8})\b"#,
            Value::Generated,
        ),
    ]
}

/// Credentials by where they stand rather than what they look like: in a URL, an HTTP
/// `Authorization` header, `curl -u`, or assigned to a password, secret or token key.
fn generic_rules() -> Vec<Rule> {
    vec![
        rule(
            "url-credentials",
            Needles::Exact(&["://"]),
            false,
            r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<secret>[^\s@/]{6,})@[^\s/]+",
            Value::Chosen,
        ),
        rule(
            "authorization-header",
            Needles::Folded(&["authorization"]),
            true,
            r#"(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:basic|bearer|token|apikey|sso-key)[ \t]+)?(?P<secret>[A-Za-z0-9+/=._~-]{8,})"#,
            Value::Token,
        ),
        rule(
            "curl-credentials",
            Needles::Exact(&["curl"]),
            false,
            r#"\bcurl\b[^\r\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)["']?[^\s:"']+:(?:"(?P<dq>[^"\r\n]+)"|(?P<bare>[^\s"']+))"#,
            Value::Chosen,
        ),
        rule(
            "password-assignment",
            Needles::Folded(&["pass", "pwd", "secret", "key", "token"]),
            true,
            r#"(?i)\b(?P<key>(?:[a-z0-9]+_)*(?:[a-z0-9]*(?:password|passwd|passphrase)|pwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key|secret[_-]?key|token))\b["']?(?P<sep>[ \t]*(?::=|=>|[:=])[ \t]*)(?:"(?P<dq>[^"\r\n]{6,})"|'(?P<sq>[^'\r\n]{6,})'|(?P<bare>[^\s"'`,;)\]}]{6,}))(?P<typed>[ \t]*=(?:[^=>]|$))?"#,
            Value::Assigned,
        ),
    ]
}

/// Generated credentials known by a fixed prefix or shape: kind, needles (one of which every
/// match holds) and pattern (bounded by [`generated`]).
const FORMATS: &[(&str, &[&str], &str)] = &[
    (
        "aws-access-key-id",
        &[
            "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "A3T",
        ],
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[A-Z2-7]{16}",
    ),
    ("gcp-api-key", &["AIza"], r"AIza[0-9A-Za-z_-]{35}"),
    (
        "google-oauth-credential",
        &["GOCSPX-", "ya29."],
        r"GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[A-Za-z0-9_-]{30,}",
    ),
    (
        "anthropic-api-key",
        &["sk-ant-"],
        r"sk-ant-(?:api|admin|oat|sid)[0-9]{2}-[A-Za-z0-9_-]{32,}",
    ),
    (
        "openai-api-key",
        &["sk-"],
        r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|sk-[A-Za-z0-9]{48}",
    ),
    ("perplexity-api-key", &["pplx-"], r"pplx-[A-Za-z0-9]{48}"),
    (
        "github-token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}",
    ),
    (
        "github-fine-grained-token",
        &["github_pat_"],
        r"github_pat_[A-Za-z0-9_]{50,255}",
    ),
    (
        "gitlab-token",
        &["gl", "GR1348941", "_gitlab_session="],
        r"gl(?:pat|dt|ptt|rt|oas|cbt|imt|soat|ffct|agent|ft)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20}|_gitlab_session=[0-9a-z]{32}",
    ),
    (
        "slack-token",
        &["xox", "xapp-"],
        r"xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9-]{10,}|xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{160,170}|xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]+",
    ),
    (
        "slack-webhook",
        &["hooks.slack.com/"],
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+]{20,}",
    ),
    (
        "discord-webhook",
        &["/api/webhooks/"],
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{60,68}",
    ),
    (
        "microsoft-teams-webhook",
        &["webhook.office.com"],
        r"https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[0-9a-f-]{36}@[0-9a-f-]{36}/IncomingWebhook/[A-Za-z0-9]{32}/[0-9a-f-]{36}",
    ),
    (
        "telegram-bot-token",
        &[":AA"],
        r"[0-9]{5,16}:AA[A-Za-z0-9_-]{33}",
    ),
    (
        "stripe-key",
        &["_live_", "_test_", "_prod_", "whsec_"],
        r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9+/]{32,}",
    ),
    (
        "square-token",
        &["EAAA", "sq0atp-", "sq0csp-"],
        r"EAAA[A-Za-z0-9_-]{22,60}|sq0atp-[A-Za-z0-9_-]{22}|sq0csp-[A-Za-z0-9_-]{43}",
    ),
    (
        "shopify-token",
        &["shpat_", "shpss_", "shpca_", "shppa_"],
        r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
    ),
    (
        "shippo-api-key",
        &["shippo_"],
        r"shippo_(?:live|test)_[a-fA-F0-9]{40}",
    ),
    (
        "duffel-token",
        &["duffel_"],
        r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}",
    ),
    (
        "easypost-token",
        &["EZAK", "EZTK"],
        r"EZ[AT]K[A-Za-z0-9]{54}",
    ),
    (
        "flutterwave-secret",
        &["FLWSECK"],
        r"FLWSECK(?:_TEST)?-[a-fA-F0-9]{32}-X|FLWSECK(?:_TEST)?-?[a-fA-F0-9]{12}",
    ),
    ("npm-token", &["npm_"], r"npm_[A-Za-z0-9]{36}"),
    (
        "huggingface-token",
        &["hf_", "api_org_"],
        r"hf_[A-Za-z]{34}|api_org_[A-Za-z]{34}",
    ),
    (
        "sendgrid-api-key",
        &["SG."],
        r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
    ),
    (
        "sendinblue-api-key",
        &["xkeysib-"],
        r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
    ),
    ("mailgun-api-key", &["key-"], r"key-[0-9a-f]{32}"),
    ("mailchimp-api-key", &["-us"], r"[0-9a-f]{32}-us[0-9]{1,2}"),
    (
        "pypi-token",
        &["pypi-AgEIcHlwaS5vcmc"],
        r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
    ),
    ("rubygems-api-key", &["rubygems_"], r"rubygems_[a-f0-9]{48}"),
    ("clojars-token", &["CLOJARS_"], r"CLOJARS_[a-z0-9]{60}"),
    (
        "jfrog-token",
        &["AKCp", "cmVmd"],
        r"AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}",
    ),
    ("digitalocean-token", &["_v1_"], r"do[por]_v1_[a-f0-9]{64}"),
    (
        "vault-token",
        &["hvs.", "hvb.", "hvr."],
        r"hv[sr]\.[A-Za-z0-9_-]{24,}|hvb\.[A-Za-z0-9_-]{138,300}",
    ),
    (
        "terraform-token",
        &["atlasv1"],
        r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
    ),
    ("pulumi-token", &["pul-"], r"pul-[a-f0-9]{40}"),
    (
        "doppler-token",
        &["dp."],
        r"dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44}",
    ),
    (
        "age-secret-key",
        &["AGE-SECRET-KEY-1"],
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    (
        "1password-secret",
        &["A3-", "ops_eyJ"],
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}|ops_eyJ[A-Za-z0-9+/]{250,}={0,3}",
    ),
    ("heroku-api-key", &["HRKU-AA"], r"HRKU-AA[0-9A-Za-z_-]{58}"),
    (
        "hubspot-token",
        &["pat-"],
        r"pat-(?:na|eu|ap)[0-9]-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    ),
    ("twilio-api-key", &["SK"], r"SK[0-9a-f]{32}"),
    (
        "linear-api-key",
        &["lin_api_", "lin_oauth_"],
        r"lin_(?:api|oauth)_[A-Za-z0-9]{40}",
    ),
    (
        "airtable-token",
        &["pat"],
        r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
    ),
    (
        "atlassian-api-token",
        &["ATATT3"],
        r"ATATT3[A-Za-z0-9_=-]{186}",
    ),
    (
        "notion-token",
        &["ntn_", "secret_"],
        r"ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}",
    ),
    (
        "sentry-dsn",
        &["://"],
        r"https?://(?P<secret>[0-9a-f]{32}(?::[0-9a-f]{32})?)@[A-Za-z0-9.-]+(?::[0-9]{1,5})?/(?:[A-Za-z0-9_.-]+/)*[0-9]+",
    ),
    (
        "sentry-token",
        &["sntryu_", "sntrys_"],
        r"sntryu_[a-f0-9]{64}|sntrys_eyJpYXQiO[A-Za-z0-9+/_=]{50,}",
    ),
    (
        "grafana-token",
        &["eyJrIjoi", "glc_", "glsa_"],
        r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}|glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
    ),
    (
        "new-relic-key",
        &["NRAK-", "NRII-", "NRAL"],
        r"NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_-]{32}|[a-f0-9]{36}NRAL",
    ),
    (
        "dynatrace-token",
        &["dt0c01."],
        r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}",
    ),
    (
        "databricks-token",
        &["dapi"],
        r"dapi[a-f0-9]{32}(?:-[0-9])?",
    ),
    ("clickhouse-api-secret", &["4b1d"], r"4b1d[A-Za-z0-9]{38}"),
    (
        "planetscale-token",
        &["pscale_"],
        r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}",
    ),
    (
        "postman-api-key",
        &["PMAK-"],
        r"PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}",
    ),
    ("prefect-api-key", &["pnu_"], r"pnu_[A-Za-z0-9]{36}"),
    ("readme-api-key", &["rdme_"], r"rdme_[a-z0-9]{70}"),
    ("infracost-token", &["ico-"], r"ico-[A-Za-z0-9]{32}"),
    ("netlify-token", &["nfp_"], r"nfp_[A-Za-z0-9]{36}"),
    (
        "flyio-token",
        &["fo1_", "fm1a_", "fm1r_", "fm2_"],
        r"fo1_[A-Za-z0-9_-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3}",
    ),
    ("scalingo-token", &["tk-us-"], r"tk-us-[A-Za-z0-9_-]{48}"),
    (
        "harness-token",
        &["pat.", "sat."],
        r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
    ),
    ("octopus-deploy-api-key", &["API-"], r"API-[A-Z0-9]{26}"),
    ("openshift-token", &["sha256~"], r"sha256~[A-Za-z0-9_-]{43}"),
    (
        "sonar-token",
        &["squ_", "sqp_", "sqa_"],
        r"sq[upa]_[a-f0-9]{40}",
    ),
    (
        "sourcegraph-token",
        &["sgp_"],
        r"sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}",
    ),
    (
        "settlemint-token",
        &["sm_"],
        r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}",
    ),
    (
        "mapbox-secret-token",
        &["sk.eyJ"],
        r"sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}",
    ),
    (
        "maxmind-license-key",
        &["_mmk"],
        r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk",
    ),
    ("typeform-token", &["tfp_"], r"tfp_[A-Za-z0-9_.=-]{59}"),
    ("frameio-token", &["fio-u-"], r"fio-u-[A-Za-z0-9_=-]{64}"),
    (
        "intra42-secret",
        &["s-s4t2"],
        r"s-s4t2(?:ud|af)-[a-f0-9]{64}",
    ),
    ("adobe-client-secret", &["p8e-"], r"p8e-[A-Za-z0-9]{32}"),
    ("alibaba-access-key-id", &["LTAI"], r"LTAI[A-Za-z0-9]{20}"),
    (
        "authress-key",
        &["sc_", "ext_", "scauth_", "authress_"],
        r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}",
    ),
    (
        "cloudflare-api-key",
        &["v1.0-"],
        r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
    ),
    (
        "facebook-token",
        &["EAAM", "EAAC"],
        r"EAA[MC][A-Za-z0-9]{100,}",
    ),
    (
        "jwt",
        &["eyJ", "ZXlK"],
        r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|ZXlK(?:aGJHY2lPaU|MGVYQWlPaU)[A-Za-z0-9+/]{40,}={0,2}",
    ),
];

/// The value of a UUID, for the services whose keys are UUIDs.
macro_rules! uuid {
    () => {
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    };
}

/// Credentials known by the service their key names: kind, the service's names (lower case)
/// and the value's pattern (matched ignoring case; see [`keyed`]).
const KEYED: &[(&str, &[&str], &str)] = &[
    (
        "twilio-auth-token",
        &[
            "twilio",
            "auth_token",
            "auth token",
            "auth-token",
            "authtoken",
        ],
        r"[0-9a-f]{32}",
    ),
    (
        "datadog-api-key",
        &[
            "datadog",
            "dd_api_key",
            "dd_app_key",
            "dd-api-key",
            "dd-app-key",
            "dd_application_key",
        ],
        r"[a-z0-9]{40}|[0-9a-f]{32}",
    ),
    ("heroku-api-key", &["heroku"], uuid!()),
    ("hubspot-token", &["hubspot"], uuid!()),
    ("snyk-token", &["snyk"], uuid!()),
    ("squarespace-token", &["squarespace"], uuid!()),
    (
        "codecov-token",
        &["codecov"],
        concat!(r"[a-z0-9]{32}|", uuid!()),
    ),
    (
        "kucoin-key",
        &["kucoin"],
        concat!(r"[a-f0-9]{24}|", uuid!()),
    ),
    (
        "plaid-secret",
        &["plaid"],
        concat!(
            r"access-(?:sandbox|development|production)-",
            uuid!(),
            r"|[a-z0-9]{30}"
        ),
    ),
    (
        "mailgun-api-key",
        &["mailgun"],
        r"[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}",
    ),
    ("adafruit-api-key", &["adafruit"], r"[a-z0-9_-]{32}"),
    ("airtable-token", &["airtable"], r"[a-z0-9]{17}"),
    ("algolia-api-key", &["algolia"], r"[a-z0-9]{32}"),
    ("alibaba-secret-key", &["alibaba"], r"[a-z0-9]{30}"),
    (
        "asana-secret",
        &["asana"],
        r"[0-9]/[0-9]{10,20}(?:/[0-9]{10,20})?:[a-f0-9]{32}|[a-z0-9]{32}",
    ),
    (
        "atlassian-api-token",
        &["atlassian", "confluence", "jira"],
        r"[a-z0-9]{24}",
    ),
    ("beamer-api-token", &["beamer"], r"b_[a-z0-9=_-]{44}"),
    ("bitbucket-secret", &["bitbucket"], r"[a-z0-9=_-]{64}"),
    ("bittrex-key", &["bittrex"], r"[a-z0-9]{32}"),
    ("cisco-meraki-api-key", &["meraki"], r"[0-9a-f]{40}"),
    (
        "cloudflare-api-key",
        &["cloudflare"],
        r"[a-z0-9_-]{40}|[a-f0-9]{37}",
    ),
    ("cohere-api-key", &["cohere", "co_api_key"], r"[a-z0-9]{40}"),
    ("coinbase-token", &["coinbase"], r"[a-z0-9_-]{64}"),
    ("confluent-secret", &["confluent"], r"[a-z0-9]{64}"),
    ("contentful-token", &["contentful"], r"[a-z0-9=_-]{43}"),
    (
        "discord-token",
        &["discord"],
        r"[a-f0-9]{64}|[a-z0-9=_-]{32}",
    ),
    (
        "droneci-token",
        &["droneci", "drone_token", "drone-token"],
        r"[a-z0-9]{32}",
    ),
    (
        "dropbox-token",
        &["dropbox"],
        r"sl\.[a-z0-9=_-]{135,}|[a-z0-9]{11}AAAAAAAAAA[a-z0-9=_-]{43}|[a-z0-9]{15}",
    ),
    ("etsy-token", &["etsy"], r"[a-z0-9]{24}"),
    (
        "facebook-token",
        &["facebook"],
        r"[a-f0-9]{32}|[0-9]{15,16}(?:\||%7C)[a-z0-9_-]{27,40}",
    ),
    ("fastly-api-token", &["fastly"], r"[a-z0-9=_-]{32}"),
    (
        "finicity-secret",
        &["finicity"],
        r"[a-f0-9]{32}|[a-z0-9]{20}",
    ),
    ("finnhub-token", &["finnhub"], r"[a-z0-9]{20}"),
    ("flickr-token", &["flickr"], r"[a-z0-9]{32}"),
    ("freshbooks-token", &["freshbooks"], r"[a-z0-9]{64}"),
    ("gitter-token", &["gitter"], r"[a-z0-9_-]{40}"),
    ("gocardless-token", &["gocardless"], r"live_[a-z0-9_=-]{40}"),
    ("intercom-token", &["intercom"], r"[a-z0-9=_-]{60}"),
    (
        "jfrog-token",
        &["jfrog", "artifactory", "bintray", "xray"],
        r"[a-z0-9]{73}|[a-z0-9]{64}",
    ),
    ("kraken-token", &["kraken"], r"[a-z0-9/=_+-]{80,90}"),
    ("launchdarkly-token", &["launchdarkly"], r"[a-z0-9=_-]{40}"),
    ("linear-api-key", &["linear"], r"[a-f0-9]{32}"),
    (
        "linkedin-secret",
        &["linkedin", "linked_in", "linked-in"],
        r"[a-z0-9]{16}",
    ),
    ("lob-api-key", &["lob"], r"(?:live|test)_[a-f0-9]{35}"),
    ("mattermost-token", &["mattermost"], r"[a-z0-9]{26}"),
    (
        "messagebird-api-key",
        &["messagebird", "message-bird", "message_bird"],
        r"[a-z0-9]{25}",
    ),
    ("netlify-token", &["netlify"], r"[a-z0-9=_-]{40,46}"),
    (
        "nytimes-token",
        &["nytimes", "newyorktimes", "new-york-times"],
        r"[a-z0-9=_-]{32}",
    ),
    ("okta-token", &["okta"], r"00[a-z0-9_=-]{40}"),
    (
        "privateai-token",
        &["privateai", "private_ai", "private-ai"],
        r"[a-z0-9]{32}",
    ),
    ("rapidapi-key", &["rapidapi"], r"[a-z0-9_-]{50}"),
    ("sendbird-token", &["sendbird"], r"[a-f0-9]{40}"),
    ("sentry-token", &["sentry"], r"[a-f0-9]{64}"),
    ("sonar-token", &["sonar"], r"[a-z0-9=_-]{40}"),
    ("sumologic-key", &["sumo"], r"[a-z0-9]{64}"),
    ("travisci-token", &["travis"], r"[a-z0-9]{22}"),
    ("twitch-token", &["twitch"], r"[a-z0-9]{30}"),
    (
        "twitter-secret",
        &["twitter"],
        r"[a-z0-9]{25}|[a-z0-9]{45}|[a-z0-9]{50}|[0-9]{15,25}-[a-z0-9]{20,40}|a{22}[a-z0-9%]{80,100}",
    ),
    (
        "yandex-token",
        &["yandex"],
        r"t1\.[a-z0-9_-]+=*\.[a-z0-9_-]{86}=*|aqvn[a-z0-9_-]{35,38}|yc[a-z0-9_-]{38}",
    ),
    ("zendesk-token", &["zendesk"], r"[a-z0-9]{40}"),
];

/// Candidate tokens for the high-entropy detector (`=` only as base64 padding, so the value of
/// `NAME=value` is a token of its own).
pub(super) static TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_\-]{24,}={0,2}").expect("token pattern is valid"));

/// What documented placeholders and examples hold (`AKIAIOSFODNN7EXAMPLE`, `sk-your-key-here`,
/// `ghp_xxxx…`), compared in lower case. A random credential holds none of them: the shortest,
/// five characters with a separator, turns up by chance about once in ten million keys.
const PLACEHOLDER_MARKERS: &[&str] = &[
    "example",
    "placeholder",
    "your-",
    "your_",
    "yourkey",
    "yourtoken",
    "yoursecret",
    "yourpassword",
    "-here",
    "_here",
    "xxxxxx",
    "dummy",
    "changeme",
    "redacted",
    "sample",
];

fn has_placeholder_marker(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    PLACEHOLDER_MARKERS.iter().any(|m| lower.contains(m))
}

/// Whether a generated credential's random part (its last 16 characters; a format's fixed
/// prefix comes first) has fewer than 5 distinct characters: a mask or a pattern
/// (`XXXXXXXX`, `00000000`, `abababab`). Sixteen random hex digits are that alike about once in
/// two million keys.
fn has_little_variety(value: &str) -> bool {
    let mut tail: Vec<char> = value.chars().rev().take(16).collect();
    tail.sort_unstable();
    tail.dedup();
    tail.len() < 5
}

/// Whether a match of a generated format is a documented placeholder rather than a credential.
fn is_made_up(value: &str) -> bool {
    has_placeholder_marker(value) || has_little_variety(value)
}

/// Words of which a key holding a credential names one (`TWILIO_AUTH_TOKEN`, `algolia api key`,
/// `sonar.login`), so that `datadog_trace_id: …` is not read as one.
const CREDENTIAL_WORDS: &[&str] = &[
    "key", "token", "secret", "pass", "pwd", "auth", "cred", "api", "access", "login", "license",
];

fn names_a_credential(caps: &Captures<'_>) -> bool {
    let key = caps
        .name("key")
        .map_or(String::new(), |k| k.as_str().to_ascii_lowercase());
    CREDENTIAL_WORDS.iter().any(|w| key.contains(w))
}

fn mixes_letters_and_digits(value: &str) -> bool {
    value.bytes().any(|b| b.is_ascii_digit()) && value.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Values that stand for a secret rather than being one: references to where it lives,
/// placeholder words, masks, elisions, earlier redactions.
fn is_reference_or_placeholder(value: &str) -> bool {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    // References to where the secret really lives: `${DB_PASSWORD}`, `{token}` in a template,
    // `<your key>`, `os.environ["KEY"]`, `process.env.TOKEN`, `$TOKEN`, a vault path.
    let starts = ["${", "$(", "{", "<", "%", "env[", "env."];
    let mentions = ["environ", "process.env", "getenv", "secrets.", "vault"];
    if starts.iter().any(|p| lower.starts_with(p))
        || mentions.iter().any(|m| lower.contains(m))
        || (v.starts_with('$')
            && v[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return true;
    }
    // Words that stand for a value rather than being one.
    let words = [
        "password",
        "none",
        "null",
        "undefined",
        "required",
        "optional",
        "string",
        "hidden",
        "secret",
        "not_set",
        "notset",
        "todo",
    ];
    if words.contains(&lower.as_str()) || has_placeholder_marker(v) {
        return true;
    }
    // An elided value (`sk-...`, `ghp_…`) shows a key's shape, not a key.
    if v.ends_with("...") || v.ends_with('…') {
        return true;
    }
    // Masks and repeated characters (`********`, `xxxxxxxx`), and earlier redactions.
    let first = v.chars().next().unwrap_or(' ');
    v.chars().all(|c| c == first) || lower.contains("[redacted")
}

/// Values of a password assignment that are references, placeholders or code, not secrets.
fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    // A function call or attribute access is code, not a literal.
    is_reference_or_placeholder(v)
        || v.contains('(')
        || (v.contains('.')
            && v.chars()
                .all(|c| c.is_alphanumeric() || c == '.' || c == '_'))
}

/// An unquoted value that is a word, an identifier or a type (`token: Option<String>`,
/// `secret: rewrite …`), not a literal secret: letters only, or type syntax.
fn is_code_or_word(value: &str) -> bool {
    is_word(value) || is_type_syntax(value)
}

fn is_word(value: &str) -> bool {
    value
        .chars()
        .all(|c| c.is_alphabetic() || c == '_' || c == '-')
}

fn is_type_syntax(value: &str) -> bool {
    value.contains(['<', '>']) || value.contains("::") || value.starts_with('&')
}

/// An identifier in camel case (`apiKey`, `dbPassword`): letters (no digits) with a lower-case
/// letter right before an upper-case one.
fn is_camel_case_identifier(value: &str) -> bool {
    value.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
        && value
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// How a password assignment is written, which says whether a bare word is its value.
enum AssignmentStyle {
    /// An environment variable set in a shell or `.env` file: an upper-case name right against
    /// `=`, as in `export DB_PASSWORD=` and a word.
    Environment,
    /// An environment variable in YAML, as in a compose file: an upper-case name, then `:`,
    /// as in `POSTGRES_PASSWORD:` and a word.
    EnvironmentInYaml,
    /// Anything else: code, prose, configuration keys in lower case.
    Other,
}

fn assignment_style(caps: &Captures<'_>) -> AssignmentStyle {
    let key = caps.name("key").map_or("", |k| k.as_str());
    let sep = caps.name("sep").map_or("", |s| s.as_str());
    let upper = key
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    match (upper, sep) {
        (true, "=") => AssignmentStyle::Environment,
        (true, sep) if sep.starts_with(':') && sep.trim() == ":" => {
            AssignmentStyle::EnvironmentInYaml
        }
        _ => AssignmentStyle::Other,
    }
}

/// Whether the value of a password, secret or token assignment is a literal secret: not a
/// placeholder or code, and, when unquoted, not a word, an identifier or a type, unless the key
/// is an environment variable's ([`AssignmentStyle`]; in YAML a camel-case identifier is still
/// code).
fn is_assigned_literal(caps: &Captures<'_>, value: &str) -> bool {
    if is_placeholder(value) {
        return false;
    }
    if caps.name("bare").is_none() {
        return true;
    }
    // `NAME: Type = …` declares a constant or a field: the bare word is its type.
    if caps.name("typed").is_some() {
        return false;
    }
    match assignment_style(caps) {
        AssignmentStyle::Environment => true,
        AssignmentStyle::EnvironmentInYaml => {
            !is_type_syntax(value) && !is_camel_case_identifier(value)
        }
        AssignmentStyle::Other => !is_code_or_word(value),
    }
}

/// Whether a private-key block's body is key material: at least 8 distinct lower-case letters,
/// digits, `+` and `/` (the armour's words are upper case; `xxxx…` or `...` is a placeholder).
fn holds_key_material(block: &str) -> bool {
    let mut seen = [false; 128];
    for b in block.bytes() {
        if b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'+' || b == b'/' {
            seen[usize::from(b)] = true;
        }
    }
    seen.iter().filter(|&&s| s).count() >= 8
}

/// Whether base64 text decodes to a PEM private key.
fn decodes_to_a_private_key(token: &str) -> bool {
    decode_base64(token).is_some_and(|bytes| bytes.windows(11).any(|w| w == b"PRIVATE KEY"))
}

/// Whether a Discord bot token's first part is a user id (17 to 20 decimal digits) in base64.
fn starts_with_an_encoded_user_id(token: &str) -> bool {
    let first = token.split('.').next().unwrap_or("");
    decode_base64(first)
        .is_some_and(|id| (17..=20).contains(&id.len()) && id.iter().all(u8::is_ascii_digit))
}

/// Decodes standard or URL-safe base64 (padding optional); `None` if it is not base64.
fn decode_base64(token: &str) -> Option<Vec<u8>> {
    let core = token.trim_end_matches('=');
    let mut bits = 0u32;
    let mut count = 0u32;
    let mut out = Vec::with_capacity(core.len() * 3 / 4);
    for b in core.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}

/// Whether a token is base64 of something plainly not a credential: prose or JSON (printable
/// text with spaces or brackets), or an image (PNG, JPEG, GIF, WebP magic numbers).
fn is_encoded_text_or_image(token: &str) -> bool {
    let Some(bytes) = decode_base64(token) else {
        return false;
    };
    let images: [&[u8]; 4] = [b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF"];
    if images.iter().any(|m| bytes.starts_with(m)) {
        return true;
    }
    let printable = bytes
        .iter()
        .filter(|b| b.is_ascii_graphic() || **b == b' ')
        .count();
    bytes.len() >= 12
        && printable * 100 >= bytes.len() * 95
        && (bytes.contains(&b' ') || bytes.starts_with(b"{") || bytes.starts_with(b"["))
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in s.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether a token looks like a random credential: long, mixing upper case, lower case and
/// digits, with high entropy. Hex strings (git object names, hashes, UUIDs) never qualify, nor
/// do lower-case ids, identifiers in camel or snake case, or paths.
pub fn is_high_entropy(token: &str) -> bool {
    let core = token.trim_end_matches('=');
    if core.len() < 24 {
        return false;
    }
    if core.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return false;
    }
    let upper = core.chars().filter(char::is_ascii_uppercase).count();
    let lower = core.chars().filter(char::is_ascii_lowercase).count();
    let digits = core.chars().filter(char::is_ascii_digit).count();
    if upper < 2 || lower < 2 || digits < 2 {
        return false;
    }
    // Paths and identifiers: segments separated by `/`, `_` or `-` that are words.
    let segments: Vec<&str> = core
        .split(['/', '_', '-', '.'])
        .filter(|s| !s.is_empty())
        .collect();
    if segments.len() > 1 && segments.iter().all(|s| s.len() < 12) {
        return false;
    }
    // In a random string letters of one case come in runs of about 1.5; an identifier in camel
    // case is made of words, runs of 3 or more.
    let (mut runs, mut letters, mut prev): (usize, usize, Option<bool>) = (0, 0, None);
    for c in core.chars() {
        let case = c.is_ascii_alphabetic().then(|| c.is_ascii_uppercase());
        if let Some(upper) = case {
            letters += 1;
            if prev != Some(upper) {
                runs += 1;
            }
        }
        prev = case;
    }
    if runs == 0 || letters as f64 / runs as f64 >= 2.6 {
        return false;
    }
    let threshold = if core.len() >= 40 { 4.3 } else { 4.0 };
    entropy(core) >= threshold
}

/// Digest prefixes whose following token is a content hash, not a secret (`h1:` is a Go
/// module's, in `go.sum`).
const HASH_PREFIXES: &[&str] = &[
    "sha1-", "sha256-", "sha384-", "sha512-", "sha1:", "sha256:", "sha384:", "sha512:", "h1:",
];

/// Whether `text` holds a run of 24 characters [`TOKEN`] could start with (checked before the
/// pattern is compiled).
pub(super) fn has_token_run(text: &str) -> bool {
    let mut run = 0;
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-') {
            run += 1;
            if run >= 24 {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// What precedes a token that is public by nature: an SSH public key, a data URI's payload.
const PUBLIC_PREFIXES: &[&str] = &[
    "ssh-ed25519 ",
    "ssh-rsa ",
    "ssh-dss ",
    "ecdsa-sha2-nistp256 ",
    "ecdsa-sha2-nistp384 ",
    "ecdsa-sha2-nistp521 ",
    ";base64,",
];

/// An armoured block (PEM or SSH2): its `BEGIN` line, header lines, then lines of base64 (each
/// maybe indented, as in YAML), on real or `\n`-escaped line ends. A block whose label does not
/// say `PRIVATE` is public (certificates, public keys, signatures).
static ARMOURED_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-{4,5} ?BEGIN (?P<label>[A-Z0-9 ]+?) ?-{4,5}(?:(?:\r?\n|\\n)[ \t]*[A-Za-z-]+: [^\r\n\\]*)*(?:(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/=]*)*")
        .expect("armoured block pattern is valid")
});

/// The byte ranges of public armoured blocks in `text`, in order.
fn public_blocks(text: &str) -> Vec<(usize, usize)> {
    if !text.contains("BEGIN ") {
        return Vec::new();
    }
    ARMOURED_BLOCK
        .captures_iter(text)
        .filter(|caps| !caps["label"].contains("PRIVATE"))
        .filter_map(|caps| caps.get(0).map(|m| (m.start(), m.end())))
        .collect()
}

/// Whether a token is the body of an SSH public key, however it is quoted or spaced: base64 of
/// a length and a key type (`ssh-…`, `ecdsa-…`, `sk-…`).
fn is_ssh_public_key_body(token: &str) -> bool {
    if !token.starts_with("AAAA") || token.len() < 24 {
        return false;
    }
    decode_base64(&token[..24]).is_some_and(|bytes| {
        let kind = &bytes[4..];
        [&b"ssh-"[..], b"ecdsa-", b"sk-"]
            .iter()
            .any(|p| kind.starts_with(p))
    })
}

/// Whether the token starting after `before` is a content hash or public key material.
fn is_digest_or_public(before: &str, token: &str) -> bool {
    HASH_PREFIXES
        .iter()
        .any(|p| before.ends_with(p) || token.starts_with(p))
        || PUBLIC_PREFIXES.iter().any(|p| before.ends_with(p))
        || is_ssh_public_key_body(token)
}

/// The byte ranges the generic detector reports: high-entropy tokens that are not hashes,
/// public keys or certificates, encoded text or images, nor documented placeholders.
pub(super) fn high_entropy_spans(text: &str) -> Vec<(usize, usize)> {
    if !has_token_run(text) {
        return Vec::new();
    }
    let public = public_blocks(text);
    let mut blocks = public.iter().peekable();
    let mut spans = Vec::new();
    for m in TOKEN.find_iter(text) {
        while blocks.next_if(|&&(_, end)| end <= m.start()).is_some() {}
        let in_public_block = blocks.peek().is_some_and(|&&(start, _)| start <= m.start());
        let token = m.as_str();
        if in_public_block || is_digest_or_public(&text[..m.start()], token) {
            continue;
        }
        if is_high_entropy(token) && !is_encoded_text_or_image(token) && !is_made_up(token) {
            spans.push((m.start(), m.end()));
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The labelled corpus: lines of `+` or `-`, a rule (or a look-alike's class), a text.
    const CORPUS: &str = include_str!("../../tests/data/secrets_corpus.tsv");

    #[test]
    fn every_kind_has_a_secret_and_a_look_alike_in_the_corpus() {
        for rule in RULES.iter() {
            for sign in ['+', '-'] {
                let label = format!("{sign}\t{}\t", rule.name);
                assert!(
                    CORPUS.lines().any(|l| l.starts_with(&label)),
                    "no line {label:?} in the corpus"
                );
            }
        }
    }

    #[test]
    fn needles_never_skip_a_rule_that_matches() {
        let mut texts: Vec<String> = CORPUS
            .lines()
            .filter_map(|l| l.splitn(3, '\t').nth(2))
            .map(|text| text.replace("\\n", "\n"))
            .collect();
        texts.push("aws_ſecret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYab".into());
        texts.push("TWILIO_AUTH_TOKEN=0f3c9a1be24d5f6a7b8c9d0e1f2a3b4c — ſeen".into());
        for text in &texts {
            let folded = OnceCell::new();
            for rule in RULES.iter() {
                if rule.pattern().is_match(text) {
                    assert!(
                        rule.may_match(text, &folded),
                        "{} skipped on {text:?}",
                        rule.name
                    );
                }
            }
        }
    }

    #[test]
    fn placeholders_masks_and_patterns_are_made_up() {
        for made_up in [
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "sk-your-key-here",
            "sk_live_0000000000000000000000000",
            "xoxb-1234-abababababababababab",
        ] {
            assert!(is_made_up(made_up), "{made_up}");
        }
        for real in [
            "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sAb",
            "AKIAM4LTJ7P2WVH7RSRT",
            "0f3c9a1be24d5f6a7b8c9d0e1f2a3b4c",
        ] {
            assert!(!is_made_up(real), "{real}");
        }
    }

    #[test]
    fn ssh_public_key_bodies_are_known_by_their_key_type() {
        for body in [
            "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA8F0xK2Lm9Pq4Rt7Wy1Ac5De8",
            "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
            "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT",
        ] {
            assert!(is_ssh_public_key_body(body), "{body}");
        }
        assert!(!is_ssh_public_key_body(
            "AAAAQm9sZGx5R29pbmdXaGVyZU5vMW9uZUhhc0dvbmVCZWZvcmU2"
        ));
    }

    #[test]
    fn case_folding_reads_the_letters_that_fold_to_ascii() {
        assert_eq!(fold_case("AWS_ſECRET \u{212A}EY"), "aws_secret key");
    }
}
