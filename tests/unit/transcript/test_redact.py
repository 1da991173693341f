"""Redaction: every secret pattern, the key rules, counts and marks, streamed deltas.

Secret-shaped values are assembled at run time so none is committed.
"""

from __future__ import annotations

import pytest
from corral.sinks.transcript import Redactor
from corral.sinks.transcript._redact import PATTERNS, Redaction
from corral.sinks.transcript._streams import DeltaRedactor

ALNUM = "Zq8vN2mL4kT7wR1pX9cB3dF6gH0jS5aEuY"

# pattern name -> (text holding a secret, the secret part that must vanish)
CASES: dict[str, tuple[str, str]] = {
    "anthropic_key": ("key: " + "sk-" + "ant-api03-" + ALNUM, ALNUM),
    "openai_key": ("use " + "sk-" + "proj-" + ALNUM + " now", ALNUM),
    "github_token": ("token " + "gh" + "p_" + ALNUM + "abcdef", ALNUM),
    "google_api_key": ("AI" + "za" + "SyA" + ALNUM[:32] + " is set", "SyA" + ALNUM[:32]),
    "aws_access_key_id": ("id AK" + "IA" + "ABCDEFGHIJKLMNOP here", "ABCDEFGHIJKLMNOP"),
    "slack_token": ("xo" + "xb-" + "1234567890-abcdefghij", "1234567890-abcdefghij"),
    "stripe_key": ("sk" + "_live_" + ALNUM, ALNUM),
    "huggingface_token": ("h" + "f_" + ALNUM, ALNUM),
    "gitlab_token": ("gl" + "pat-" + ALNUM[:20], ALNUM[:20]),
    "xai_key": ("x" + "ai-" + ALNUM, ALNUM),
    "groq_key": ("gs" + "k_" + ALNUM, ALNUM),
    "jwt": ("eyJ" + "hbGciOiJI.eyJ" + "zdWIiOiIx.SflKxwRJSMeKKF2Q", "SflKxwRJSMeKKF2Q"),
    "authorization_header": ("Authorization: Basic " + "dXNlcjpwYXNz" + "d29yZA==", "dXNlcjpwYXNz"),
    "bearer_token": ("curl -H 'X: Bearer " + "abc.def-" + ALNUM + "'", ALNUM),
    "api_key_header": ("x-api-key: " + "k3y" + ALNUM, "k3y" + ALNUM),
    "secret_env": ("export MY_SERVICE_" + "TOKEN=" + "hunter2hunter2", "hunter2hunter2"),
    "private_key": (
        "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH " + "PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAA",
    ),
}


def test_every_case_is_a_pattern() -> None:
    # The patterns added later have their cases in test_redact_more.py, which checks them all.
    assert set(CASES) <= set(PATTERNS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_pattern_is_redacted_counted_and_marked(name: str) -> None:
    text, secret = CASES[name]
    redacted, found = Redactor().redact({"text": text})
    assert secret not in redacted["text"]
    assert f"[REDACTED:{name}]" in redacted["text"]  # this pattern fired, not another
    assert found.counts[name] >= 1
    assert found.mark()["count"] == found.total


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("OPENAI_API_KEY", "whatever-it-is"),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI"),
        ("api_key", "short"),
        ("Authorization", "Token abc"),
        ("password", "correct horse"),
        ("github_token", "abc123def456"),
        ("aws_secret_access_key", "wJalrXUtnFEMI"),
    ],
)
def test_a_string_under_a_secret_named_key_is_redacted(key: str, value: str) -> None:
    redacted, found = Redactor().redact({"env": {key: value}})
    assert redacted["env"][key] == "[REDACTED:secret_field]"
    assert found.counts["secret_field"] == 1


def test_values_of_secret_named_env_vars_in_text_are_redacted() -> None:
    text = 'GITHUB_TOKEN="abc123def456" DB_PASSWORD=swordfish PATH=/usr/bin'
    redacted, found = Redactor().redact(text)
    assert "abc123def456" not in redacted and "swordfish" not in redacted
    assert "GITHUB_TOKEN=" in redacted and "PATH=/usr/bin" in redacted
    assert found.counts["secret_env"] == 2


@pytest.mark.parametrize(
    "line",
    [
        "aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCY",  # ~/.aws/credentials
        "aws_session_token=IQoJb3JpZ2luX2VjEJr",
        'openai_api_key = "k3y-value-here"',
    ],
)
def test_a_lower_case_credentials_file_assignment_is_redacted(line: str) -> None:
    name, _, value = line.partition("=")
    redacted, found = Redactor().redact(f"[default]\n{line}\n")
    assert value.strip(' "') not in redacted
    assert f"{name}=" in redacted and "[REDACTED:secret_env]" in redacted
    assert found.counts["secret_env"] == 1


@pytest.mark.parametrize(
    "value",
    [
        {"used_tokens": 12345, "window_tokens": 200000},
        {"max_tokens": "4096", "input_tokens": "12"},
        {"text": "def f(input_tokens: int, api_key: str) -> None: ..."},
        {"auth": "Unknown"},
        {"resume_token": "0197a3b2-4c5d-7e6f"},
        {"text": "the task-list of a risk-free desk-job; use ${GITHUB_TOKEN} from the env"},
        {"text": "Bearer tokens are described in RFC 6750"},
    ],
)
def test_ordinary_data_is_left_alone(value: object) -> None:
    redacted, found = Redactor().redact(value)
    assert redacted == value
    assert found.total == 0


def test_keys_are_kept_and_numbers_are_never_touched() -> None:
    redacted, _ = Redactor().redact({"api_key": 42, "API_TOKEN": True})
    assert redacted == {"api_key": 42, "API_TOKEN": True}


def test_an_already_redacted_value_is_not_counted_again() -> None:
    once, first = Redactor().redact({"text": CASES["openai_key"][0]})
    twice, second = Redactor().redact(once)
    assert twice == once
    assert first.total == 1 and second.total == 0


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_a_secret_split_over_streamed_deltas_never_survives(name: str, size: int) -> None:
    text, secret = CASES[name]
    streamed = f"here it is: {text} and that is all"
    deltas = DeltaRedactor()
    found = Redaction()
    pieces = [streamed[i : i + size] for i in range(0, len(streamed), size)]
    written = [deltas.redact("m1", piece, found) for piece in pieces]
    joined = "".join(written)
    for start in range(0, len(secret) - 3):
        assert secret[start : start + 4] not in joined, (name, size, joined)
    assert found.total >= 1
    assert joined.endswith("and that is all"[-size:])


def test_streams_are_kept_apart() -> None:
    deltas = DeltaRedactor()
    found = Redaction()
    assert "AbCd" not in deltas.redact("m1", "key " + "sk-" + "ant-api03-AbCd", found)
    assert deltas.redact("m2", "EfGhIjKlMnOpQrStUv is a word", found) == (
        "EfGhIjKlMnOpQrStUv is a word"
    )


SECRET_KEY_VALUES = {"env": {"password": "correct horse"}, "Cookie": "id=42"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_quick_check_never_misses_what_the_redactor_would_change(name: str) -> None:
    import orjson
    from corral.sinks.transcript._redact import might_need_redaction

    value = {"text": CASES[name][0]}
    assert Redactor().redact(value)[1].total and might_need_redaction(orjson.dumps(value))
    assert Redactor().redact(SECRET_KEY_VALUES)[1].total
    assert might_need_redaction(orjson.dumps(SECRET_KEY_VALUES))


def test_the_quick_check_lets_ordinary_text_through() -> None:
    import orjson
    from corral.sinks.transcript._redact import might_need_redaction

    ordinary = {"TextDelta": {"message_id": "m1", "text": "Two files: a.txt and b.txt"}}
    assert not might_need_redaction(orjson.dumps(ordinary))


def test_the_quick_check_ignores_plain_key_names_but_not_their_values() -> None:
    import orjson
    from corral.sinks.transcript._redact import might_need_redaction

    plain = {"resume_token": None, "usage": {"input_tokens": 5, "max_tokens": 9}}
    assert not might_need_redaction(orjson.dumps(plain))
    for key in ("resume_token", "input_tokens"):
        holding = {key: CASES["anthropic_key"][0]}
        assert Redactor().redact(holding)[1].total
        assert might_need_redaction(orjson.dumps(holding)), key
    # A secret-named key next to a plain one still counts.
    assert might_need_redaction(orjson.dumps({"resume_token": None, "password": "x"}))
