//! The credential formats as data: prefixed tokens (each a fact: prefix, length, alphabet) and
//! secrets found by the service named in the key they are assigned to.

/// Generated credentials known by a fixed prefix or shape: kind, needles (one of which every
/// match holds) and pattern (bounded by [`generated`]).
pub(super) const FORMATS: &[(&str, &[&str], &str)] = &[
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
pub(super) const KEYED: &[(&str, &[&str], &str)] = &[
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
