"""Redaction of the later key formats, secret JSON fields, and a session's own secrets.

Each pattern has a realistic fake key, assembled at run time so none is
committed whole. What each test states: the secret part vanishes, the
pattern that fired is the one named, the quick check (the Aho-Corasick
prefilter) lets it through to the patterns, and a secret streamed in two
deltas, split anywhere, never reaches the output.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from corral.sinks.transcript import Redactor, WireRecorder
from corral.sinks.transcript._redact import (
    PATTERNS,
    Redaction,
    might_hold_secret,
    might_need_redaction,
    secret_values,
)
from corral.sinks.transcript._streams import DeltaRedactor

from .test_redact import CASES as FIRST_CASES

HEX32 = "3f9a1c0e7b2d4f6a8c1e3b5d7f9a0c2e"
B64_40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
AWS_ID = "AK" + "IA" + "IOSFODNN7EXAMPLE"
ALNUM36 = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
HEX64 = HEX32 + HEX32[::-1]
PYPI_BODY = "AgEIcHlwaS5vcmcCJDU3OGU5ZjA0LWJiNGMtNDI0Yi1iZmQ3LTA2ZDc3NjZkNjc1ZgACKlsz"
SAS_SIG = "Kx9%2FzQ7pL2mN4vB8cX1aS3dF5gH7jK9lQ%3D"

# pattern name -> (text holding a secret, the secret part that must vanish)
CASES: dict[str, tuple[str, str]] = {
    "url_password": (
        "clone https://deploy:" + "s3cr3t-Pa55" + "@git.example.com/r.git",
        "s3cr3t-Pa55",
    ),
    "curl_user": ("curl -u admin:" + "hunter2-xyz" + " https://api.example.com", "hunter2-xyz"),
    "aws_secret_key": ("aws_secret_access_key: " + B64_40, B64_40),
    "aws_key_pair": (f"{AWS_ID} {B64_40}", B64_40),
    "npm_token": ("//npm.example.com/:_authToken=" + "npm_" + ALNUM36, ALNUM36),
    "pypi_token": ("password = " + "pypi-" + PYPI_BODY, PYPI_BODY),
    "sendgrid_key": (
        "key SG" + ".ngeVfQFYQlKU0ufo8x5d1A" + ".TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
        "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
    ),
    "twilio_api_key": ("api key S" + "K" + HEX32 + " created", HEX32),
    "twilio_auth_token": (
        "A" + "C" + HEX32[::-1] + ":" + "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a",
        "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a",
    ),
    "digitalocean_token": ("doctl auth init -t " + "dop_v1_" + HEX64, HEX64),
    "azure_key": (
        "DefaultEndpointsProtocol=https;AccountName=acme;Account"
        + "Key=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq",
    ),
    "azure_sas": (
        "https://acme.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&si" + "g=" + SAS_SIG,
        SAS_SIG,
    ),
    "json_secret_field": (
        '{"user": "ci", "db' + 'Password": "correct-horse-9"}',
        "correct-horse-9",
    ),
}


def test_every_pattern_has_a_case() -> None:
    assert set(PATTERNS) == set(FIRST_CASES) | set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_later_pattern_is_redacted_counted_and_marked(name: str) -> None:
    text, secret = CASES[name]
    redacted, found = Redactor().redact({"text": text})
    assert secret not in redacted["text"]
    assert f"[REDACTED:{name}]" in redacted["text"]
    assert found.counts[name] >= 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_quick_check_lets_each_later_pattern_through(name: str) -> None:
    text, _ = CASES[name]
    assert might_hold_secret(text)
    assert might_need_redaction(orjson.dumps({"text": text}))


def test_the_readable_part_of_a_url_or_curl_line_stays() -> None:
    redacted, _ = Redactor().redact(CASES["url_password"][0] + "; " + CASES["curl_user"][0])
    assert "https://deploy:[REDACTED:url_password]@git.example.com/r.git" in redacted
    assert "curl -u admin:[REDACTED:curl_user] https://api.example.com" in redacted


def test_a_url_password_inside_a_tool_input_is_redacted() -> None:
    tool = {"ToolUpdated": {"id": "t1", "input": {"command": CASES["url_password"][0]}}}
    redacted, found = Redactor().redact(tool)
    assert "s3cr3t-Pa55" not in orjson.dumps(redacted).decode()
    assert found.counts["url_password"] == 1


@pytest.mark.parametrize(
    "ordinary",
    [
        "see https://example.com:8443/path and mailto:someone@example.com",
        "commit 3f9a1c0e7b2d4f6a8c1e3b5d7f9a0c2e3f9a1c0e is on main",  # a git hash
        "TASK: ask the desk; msg.SG is a field; ACME and SKU codes",
        '{"max_tokens": "4096", "input_tokens": "12"}',
        "curl https://example.com -o out.txt",
    ],
)
def test_look_alikes_are_left_alone(ordinary: str) -> None:
    redacted, found = Redactor().redact({"text": ordinary})
    assert redacted == {"text": ordinary}
    assert found.total == 0


def test_a_service_account_file_loses_its_private_key() -> None:
    pem = "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n"
    key_file = {
        "type": "service_account",
        "private_key_id": "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c",
        "private_key": pem,
        "client_email": "ci@acme.iam.gserviceaccount.com",
    }
    as_text, _ = Redactor().redact({"output": orjson.dumps(key_file).decode()})
    as_value, _ = Redactor().redact(key_file)
    for redacted in (orjson.dumps(as_text).decode(), orjson.dumps(as_value).decode()):
        assert "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in redacted
        assert "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c" not in redacted
        assert "ci@acme.iam.gserviceaccount.com" in redacted


@pytest.mark.parametrize(
    "record",
    [
        {"token": "tok-abc123"},
        {"deep": [{"nested": {"Password": "pw-9"}}]},
        {"clientSecret": "cs-1"},
        {"config": {"auth": {"refreshToken": "rt-1", "secret": "s-1"}}},
    ],
)
def test_secret_named_json_fields_at_any_depth_are_redacted(record: dict[str, object]) -> None:
    redacted, found = Redactor().redact(record)
    encoded = orjson.dumps(redacted).decode()
    assert "[REDACTED:secret_field]" in encoded
    for value in ("tok-abc123", "pw-9", "cs-1", "rt-1", "s-1"):
        assert value not in encoded
    assert found.total >= 1


# ---- a session's own secrets (open.env) ------------------------------------------------


def test_secret_values_are_the_secret_named_long_enough_ones() -> None:
    env = {"DB_PASSWORD": "tr0ub4dor&3", "PATH": "/usr/bin", "API_TOKEN": "abc", "HOME": "/h"}
    assert secret_values(env.items()) == ("tr0ub4dor&3",)


def test_a_session_secret_is_masked_wherever_it_appears() -> None:
    redactor = Redactor().knowing(secret_values([("DB_PASSWORD", "tr0ub4dor&3")]))
    record = {"text": "connecting with tr0ub4dor&3 to db", "input": {"cmd": "psql -W tr0ub4dor&3"}}
    assert redactor.might_need_redaction(orjson.dumps(record))
    redacted, found = redactor.redact(record)
    assert "tr0ub4dor&3" not in orjson.dumps(redacted).decode()
    assert found.counts["session_secret"] == 2


def test_a_short_session_value_is_not_masked_everywhere() -> None:
    redactor = Redactor().knowing(secret_values([("ADMIN_PASSWORD", "admin")]))
    redacted, found = redactor.redact({"text": "log in as admin"})
    assert redacted == {"text": "log in as admin"} and found.total == 0


def test_a_session_secret_split_over_two_deltas_never_survives() -> None:
    secret = "tr0ub4dor&3-horse"
    for cut in range(1, len(secret)):
        deltas = DeltaRedactor(known=(secret,))
        found = Redaction()
        first = deltas.redact("m1", "the password is " + secret[:cut], found)
        second = deltas.redact("m1", secret[cut:] + " ok", found)
        joined = first + second
        assert secret[:4] not in joined and secret[-4:] not in joined, (cut, joined)
        assert joined.startswith("the password is ") and joined.endswith(" ok")


# ---- split deltas -------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_later_secret_split_over_two_deltas_never_survives(name: str) -> None:
    text, secret = CASES[name]
    streamed = f"here it is: {text} and that is all"
    start = streamed.index(secret)
    for cut in range(start + 1, start + len(secret)):
        deltas = DeltaRedactor()
        found = Redaction()
        joined = deltas.redact("m1", streamed[:cut], found) + deltas.redact(
            "m1", streamed[cut:], found
        )
        for piece in range(0, len(secret) - 5):
            assert secret[piece : piece + 6] not in joined, (name, cut, joined)
        assert found.total >= 1
        assert joined.endswith("and that is all")


# ---- the raw wire recording ---------------------------------------------------------------


def _delta_line(text: str) -> bytes:
    event = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": text},
    }
    return orjson.dumps({"type": "stream_event", "event": event}) + b"\n"


@pytest.mark.parametrize("name", ["anthropic_key", "npm_token", "url_password"])
def test_the_wire_recording_redacts_a_secret_split_across_messages(
    tmp_path: Path, name: str
) -> None:
    text, secret = {**FIRST_CASES, **CASES}[name]
    streamed = f"here it is: {text} and that is all"
    cut = streamed.index(secret) + len(secret) // 2
    recorder = WireRecorder(redactor=Redactor())
    path = tmp_path / "s.wire.jsonl"
    recorder.register("s1", path)
    recorder.wire_line("s1", "in", _delta_line(streamed[:cut]))
    recorder.wire_line("s1", "in", _delta_line(streamed[cut:]))
    recorder.release("s1")
    recorder.close()
    recorded = path.read_text()
    for piece in range(0, len(secret) - 5):
        assert secret[piece : piece + 6] not in recorded, (name, recorded)
    texts = [orjson.loads(line)["in"]["event"]["delta"]["text"] for line in recorded.splitlines()]
    assert texts[0].startswith("here it is: ") and texts[1].endswith(" and that is all")


def test_the_wire_recording_masks_a_session_secret(tmp_path: Path) -> None:
    recorder = WireRecorder(redactor=Redactor())
    path = tmp_path / "s.wire.jsonl"
    recorder.register("s1", path)
    recorder.learn_secrets("s1", secret_values([("DB_PASSWORD", "tr0ub4dor&3")]))
    recorder.wire_line("s1", "in", _delta_line("psql with tr0ub"))
    recorder.wire_line("s1", "in", _delta_line("4dor&3 now"))
    recorder.wire_line("s1", "out", b'{"input": "the password is tr0ub4dor&3"}\n')
    recorder.release("s1")
    recorder.close()
    recorded = path.read_text()
    assert "tr0ub" not in recorded and "4dor&3" not in recorded
    assert recorded.count("[REDACTED:session_secret]") == 3
