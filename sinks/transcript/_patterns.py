"""The secret patterns and the literals each one needs (the redactor's table).

`PATTERNS` maps a name to a regex; the whole match is replaced, except a
group named `keep` (a readable prefix such as "Bearer ", "FOO_TOKEN=" or
"https://user:") which stays. The order is the order they run in: a
pattern that needs to see another's match (an AWS secret key found next
to its access key id) comes before it.

`PATTERN_HINTS` gives each pattern the literals one of which it cannot
match without: (as written, in lower case for the case-insensitive ones).
Text with none of a pattern's literals is not searched with it, and text
with none at all (most text) with none. The literals are narrow on
purpose: "sk-" alone is in "task-list", so only patterns that can match
run. `CASED_HINTS` are the few literals that only mean something in their
own case ("SK" + hex is a Twilio key; "sk" is in "task"): the quick check
looks for them in the text as written, the others in lower-cased text.

`PARTIAL` finds, at the end of a streamed delta, what starts like a secret
whose rest may come in the next delta (`_streams.py` masks it at once).
"""

from __future__ import annotations

import re

__all__ = ["CASED_HINTS", "ENV_NAME", "PARTIAL", "PATTERNS", "PATTERN_HINTS"]

ENV_NAME = (
    r"[A-Z][A-Z0-9_]*"
    r"(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|AUTH_KEY)"
    r"[A-Z0-9_]*"
)
# Lower-case names only in `name = value` form (`~/.aws/credentials`, .ini, TOML) and only
# with these endings: lower case is also code, where `input_tokens: int` is no secret.
_LOWER_NAME = (
    r"[a-z][a-z0-9_]*_"
    r"(?:secret_access_key|secret_key|session_token|access_token|auth_token|api_key|client_secret)"
)
_B64 = r"[A-Za-z0-9/+]"
# Forty base64 characters standing alone, with upper case, lower case and a digit:
# an AWS secret access key (a git hash is lower-case hex, so never this).
_AWS_SECRET = (
    rf"(?<!{_B64})(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9])"
    rf"{_B64}{{40}}(?![A-Za-z0-9/+=])"
)
# A JSON field whose name says it holds a secret, seen as text (a file an agent
# writes or reads, a tool's output); `max_tokens` ends in "s" and does not count.
_SECRET_FIELD_NAME = (
    r"[A-Za-z0-9_\-]*(?i:token|password|passwd|secret|api_?key|apikey|private_?key(?:_id)?)"
)

PATTERNS: dict[str, str] = {
    "private_key": (
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?"
        r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    ),
    "anthropic_key": r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
    "openai_key": r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
    "github_token": r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    "google_api_key": r"\bAIza[0-9A-Za-z_\-]{35}",
    "aws_key_pair": rf"(?P<keep>\b(?:AKIA|ASIA)[0-9A-Z]{{16}}\b[^\n]{{1,200}}?){_AWS_SECRET}",
    "aws_access_key_id": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "aws_secret_key": (
        r"(?P<keep>(?i:aws_?secret_?access_?key|secret_?access_?key|aws_?secret_?key)"
        rf"[\"']?\s*[:=]\s*[\"']?){_AWS_SECRET}"
    ),
    "slack_token": r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    "stripe_key": r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
    "huggingface_token": r"\bhf_[A-Za-z0-9]{30,}",
    "gitlab_token": r"\bglpat-[A-Za-z0-9_\-]{20,}",
    "xai_key": r"\bxai-[A-Za-z0-9]{20,}",
    "groq_key": r"\bgsk_[A-Za-z0-9]{20,}",
    "npm_token": r"\bnpm_[A-Za-z0-9]{36}\b",
    "pypi_token": r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",
    "sendgrid_key": r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}",
    "twilio_api_key": r"\bSK[0-9a-fA-F]{32}\b",
    "twilio_auth_token": (
        r"(?P<keep>\bAC[0-9a-fA-F]{32}\b[^\n]{1,80}?)(?<![0-9A-Za-z])[0-9a-f]{32}\b"
    ),
    "digitalocean_token": r"\bdo[opr]_v1_[a-f0-9]{64}\b",
    "azure_key": r"(?P<keep>\b(?:AccountKey|SharedAccessKey)=)[A-Za-z0-9+/]{20,}={0,2}",
    "azure_sas": (
        r"(?P<keep>\bSharedAccessSignature=|[?&;]sig=)(?:[A-Za-z0-9+/_\-]|%[0-9A-Fa-f]{2}){16,}=*"
    ),
    "jwt": r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    "url_password": (
        r"(?P<keep>\b[A-Za-z][A-Za-z0-9+.\-]{0,20}://[^\s:/?#@\"'<>\[\]\\]+:)"
        r"[^\s/?#@\"'<>\\]+(?=@)"
    ),
    "curl_user": (
        r"(?P<keep>\bcurl\b[^\n|;&]*?\s(?:-u|--user)(?:\s+|=)?[\"']?[^\s:\"']+:)[^\s\"']+"
    ),
    "authorization_header": (
        r"(?P<keep>\b(?i:authorization|proxy-authorization)\s*[:=]\s*[\"']?"
        r"(?i:bearer|basic|token)\s+)[A-Za-z0-9._~+/\-]+=*"
    ),
    "bearer_token": r"(?P<keep>\b[Bb]earer\s+)[A-Za-z0-9._~+/\-]{16,}=*",
    "api_key_header": r"(?P<keep>\b(?i:x-api-key|x-goog-api-key|api-key)\s*:\s*)[^\s\"',;]{8,}",
    "json_secret_field": (
        rf"(?P<keep>\\?\"{_SECRET_FIELD_NAME}\\?\"\s*:\s*\\?\")(?!\[REDACTED:)[^\"\\\n]+"
    ),
    "secret_env": (
        rf"(?P<keep>(?<![A-Za-z0-9_])(?:(?:export\s+)?[\"']?{ENV_NAME}[\"']?\s*(?:=|:)"
        rf"|{_LOWER_NAME}[ \t]*=)\s*)"
        r"(?:\"[^\"\n]+\"|'[^'\n]+'|(?![\"'$])[^\s\"',;}]+)"
    ),
}

_ENV_HINTS = (
    "SECRET", "TOKEN", "PASSW", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "CREDENTIAL",
    "AUTH_KEY",
)  # fmt: skip
_LOWER_ENV_HINTS = (
    "secret_access_key", "secret_key", "session_token", "access_token", "auth_token", "api_key",
    "client_secret",
)  # fmt: skip
PATTERN_HINTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "private_key": (("PRIVATE KEY",), ()),
    "anthropic_key": (("sk-ant-",), ()),
    "openai_key": (("sk-",), ()),
    "github_token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ()),
    "google_api_key": (("AIza",), ()),
    "aws_key_pair": (("AKIA", "ASIA"), ()),
    "aws_access_key_id": (("AKIA", "ASIA"), ()),
    "aws_secret_key": ((), ("secret_access_key", "secretaccesskey", "aws_secret", "awssecret")),
    "slack_token": (("xox",), ()),
    "stripe_key": (("k_live_", "k_test_"), ()),
    "huggingface_token": (("hf_",), ()),
    "gitlab_token": (("glpat-",), ()),
    "xai_key": (("xai-",), ()),
    "groq_key": (("gsk_",), ()),
    "npm_token": (("npm_",), ()),
    "pypi_token": (("pypi-AgE",), ()),
    "sendgrid_key": (("SG.",), ()),
    "twilio_api_key": (("SK",), ()),
    "twilio_auth_token": (("AC",), ()),
    "digitalocean_token": (("dop_v1_", "doo_v1_", "dor_v1_"), ()),
    "azure_key": (("AccountKey=", "SharedAccessKey="), ()),
    "azure_sas": (("SharedAccessSignature=", "sig="), ()),
    "jwt": (("eyJ",), ()),
    "url_password": (("://",), ()),
    "curl_user": (("curl",), ()),
    "authorization_header": ((), ("authorization",)),
    "bearer_token": ((), ("bearer",)),
    "api_key_header": ((), ("api-key",)),
    "json_secret_field": (
        (),
        ("token", "passw", "secret", "api_key", "apikey", "private_key", "privatekey"),
    ),
    "secret_env": (_ENV_HINTS, _LOWER_ENV_HINTS),
}
# Literals that would, lower-cased, be in too much ordinary text ("sk" in "task",
# "ac" in "each", "sg." in "msg."): the quick check looks for them as written.
CASED_HINTS = ("SK", "AC", "SG.")

PARTIAL = re.compile(
    r"(?P<keep>\bsk-(?:ant-(?:[a-z]{2,6}\d{0,3}-)?|proj-|svcacct-|admin-)?|\bgh[pousr]_|"
    r"\bgithub_pat_|\bAIza|\b(?:AKIA|ASIA)|\bxox[abposr]-|\bhf_|\bglpat-|\bxai-|\bgsk_|"
    r"\b[rs]k_(?:live|test)_|\beyJ|\b[Bb]earer\s+|"
    r"\bnpm_|\bpypi-|\bSG\.|\bSK(?=[0-9a-fA-F]*\Z)|\bdo[opr]_v1_|"
    r"\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=|[?&;]sig=|"
    r"\b[A-Za-z][A-Za-z0-9+.\-]{0,20}://[^\s:/?#@\"'<>\[\]\\]+:|"
    r"\bcurl\b[^\n|;&]*?\s(?:-u|--user)(?:\s+|=)?[\"']?[^\s:\"']+:|"
    r"(?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?|"
    r"\b(?i:x-api-key|x-goog-api-key|api-key)\s*:\s*|"
    # A key pair: after an access key id or an account SID, a run may begin the secret.
    # (a run that could be one: base64 with more than lower case; hex with a digit).
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b[^\n]{1,200}?(?<![A-Za-z0-9/+])"
    r"(?=[A-Za-z0-9/+]*[A-Z0-9/+][A-Za-z0-9/+]*\Z)|"
    r"\bAC[0-9a-fA-F]{32}\b[^\n]{1,80}?(?<![0-9A-Za-z])(?=[0-9a-f]*[0-9][0-9a-f]*\Z)|"
    r"\b(?i:authorization|proxy-authorization)\s*[:=]\s*[\"']?(?i:bearer|basic|token)\s+|"
    rf"\\?\"{_SECRET_FIELD_NAME}\\?\"\s*:\s*\\?\"|"
    rf"(?<![A-Za-z0-9_]){ENV_NAME}[\"']?\s*[=:]\s*[\"']?)"
    r"[A-Za-z0-9_\-./+=%]+\Z"
)
