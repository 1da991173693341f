"""The replay runner (actors/replay): replay items through a real engine, as records."""

from __future__ import annotations

from pathlib import Path

import pytest
from corral.actors.replay import (
    NativeReaders,
    Prompted,
    ReaderUnavailable,
    ReplaySession,
    detect_format,
    imported_installation,
    replay,
)
from corral.pipeline.driver import (
    AgentExited,
    Driver,
    Emitted,
    PromptSent,
    ReplayItem,
    RequestAsked,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.events import (
    CommandInput,
    Completed,
    CompletionSource,
    Event,
    Failed,
    MessageEnded,
    PermissionChoice,
    PermissionRequest,
    PromptOrigin,
    RequestClosed,
    RequestOpened,
    SessionStatus,
    StatusChanged,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    TurnEnded,
    TurnStarted,
)
from corral.pipeline.records import Closed, Decision, Opened, SessionFailed, SinkItem
from corral.sources import claude, codex, copilot
from corral.sources.acp import _catalog as acp
from corral.sources.catalog import Catalog, CatalogEntry, NativeTranscripts
from corral.sources.registry import default_catalog

from tests.support.schema import check

from .readers import FIXTURES

T0 = 1_750_000_000 * 10**9


def _run(items: list[ReplayItem]) -> list[SinkItem]:
    session = ReplaySession(session_id="s1", agent=imported_installation("claude"), started_ns=T0)
    return list(replay(items, session=session))


def _events(records: list[SinkItem]) -> list[Event]:
    return [record for record in records if isinstance(record, Event)]


def _text_turn(text: str, *, at_ns: int | None = None, end: bool = True) -> list[ReplayItem]:
    items: list[ReplayItem] = [
        PromptSent(text=f"say {text}", at_ns=at_ns),
        Emitted(kind=TextDelta(message_id=f"m-{text}", text=text)),
        Emitted(kind=MessageEnded(f"m-{text}")),
    ]
    return items + ([TurnFinished(stop=Completed())] if end else [])


def test_a_replay_opens_numbers_every_event_and_closes() -> None:
    records = _run(_text_turn("one") + _text_turn("two"))
    assert isinstance(records[0], Opened) and isinstance(records[-1], Closed)
    events = _events(records)
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    for event in events:
        check("line-protocol.schema.json", "Event", event.to_wire())
    assert records[-1].events == len(events) and records[-1].turns == 2


def test_each_prompt_is_recorded_before_its_turn_starts() -> None:
    records = _run(_text_turn("one"))
    prompt = next(i for i, r in enumerate(records) if isinstance(r, Prompted))
    started = next(
        i for i, r in enumerate(records) if isinstance(r, Event) and isinstance(r.kind, TurnStarted)
    )
    assert prompt < started
    assert records[prompt] == Prompted(session_id="s1", prompt_id="p1", text="say one",
                                       at=records[prompt].at)  # type: ignore[union-attr]  # fmt: skip
    assert records[started].kind == TurnStarted(PromptOrigin("p1"))  # type: ignore[union-attr]


def test_the_engine_gives_turns_and_status_as_live() -> None:
    kinds = [type(e.kind).__name__ for e in _events(_run(_text_turn("one")))]
    assert kinds == [
        "TurnStarted", "StatusChanged", "TextDelta", "MessageEnded", "TurnEnded", "StatusChanged",
    ]  # fmt: skip


def test_a_prompt_while_the_previous_turn_is_open_infers_its_end() -> None:
    events = _events(_run(_text_turn("one", end=False) + _text_turn("two")))
    ends = [e.kind for e in events if isinstance(e.kind, TurnEnded)]
    assert ends[0] == TurnEnded(stop=Completed(CompletionSource.INFERRED))
    assert ends[1] == TurnEnded(stop=Completed(CompletionSource.PROTOCOL))
    statuses = [e.kind.status for e in events if isinstance(e.kind, StatusChanged)]
    assert statuses == [SessionStatus.WORKING, SessionStatus.IDLE] * 2


def test_the_end_of_the_file_ends_an_open_turn_and_closes() -> None:
    records = _run(_text_turn("one", end=False))
    ends = [e.kind for e in _events(records) if isinstance(e.kind, TurnEnded)]
    assert ends == [TurnEnded(stop=Completed(CompletionSource.INFERRED))]
    assert isinstance(records[-1], Closed) and records[-1].reason == "closed"


def test_wall_time_follows_the_prompts_and_never_goes_back() -> None:
    later = T0 + 60 * 10**9
    events = _events(_run(_text_turn("one", at_ns=later) + _text_turn("two", at_ns=T0)))
    times = [e.occurred_at.seconds for e in events]
    assert times == sorted(times)
    assert times[0] == later / 1e9


def test_an_agent_exit_fails_the_turn_and_the_session() -> None:
    items = [*_text_turn("one", end=False), AgentExited(status="1", stderr="boom")]
    records = _run([*items, *_text_turn("ignored")])
    ends = [e.kind for e in _events(records) if isinstance(e.kind, TurnEnded)]
    assert len(ends) == 1 and isinstance(ends[0].stop, Failed)
    failure = next(r for r in records if isinstance(r, SessionFailed))
    assert failure.error.fields["stderr"] == "boom"
    assert isinstance(records[-1], Closed) and records[-1].reason == "failed"
    assert not any(isinstance(r, Prompted) and r.text == "say ignored" for r in records)


def test_a_request_left_open_is_closed_at_the_turn_end_with_its_decision() -> None:
    tool = ToolUpdate(id="tool1", kind=ToolKind.EXECUTE, title="ls", status=ToolStatus.PENDING,
                      input=CommandInput(command="ls"))  # fmt: skip
    request = PermissionRequest(
        id="r1", tool=tool, options=(PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE)
    )
    records = _run([PromptSent(text="list"), TurnBegan(), RequestAsked(request=request),
                    TurnFinished(stop=Completed())])  # fmt: skip
    kinds = [e.kind for e in _events(records)]
    assert RequestOpened(request) in kinds and RequestClosed("r1") in kinds
    decision = next(r for r in records if isinstance(r, Decision))
    assert (decision.decision, decision.decided_by) == ("cancelled", "turn_end")


@pytest.mark.parametrize(
    ("folder", "expected"), [("claude", "claude"), ("codex", "codex"), ("copilot", "copilot")]
)
def test_the_format_of_each_native_transcript_is_detected(folder: str, expected: str) -> None:
    (path,) = (FIXTURES / folder).glob("*.jsonl")
    assert detect_format(path) == expected


def test_a_corral_transcript_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"transcript": {"format": 1, "id": "t"}}\n')
    assert detect_format(path) == "corral"


@pytest.mark.parametrize("content", [b"", b"not json at all\n", b'{"hello": 1}\n', b"[1, 2]\n"])
def test_an_unknown_file_has_no_format(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    assert detect_format(path) is None


def test_a_format_no_catalog_entry_declares_has_no_reader() -> None:
    readers = NativeReaders(formats=[])
    with pytest.raises(ReaderUnavailable, match="no reader for 'claude' files"):
        readers.get("claude")
    (path,) = (FIXTURES / "claude").glob("*.jsonl")
    assert readers.detect(path) is None


def test_each_agent_s_format_is_declared_by_its_own_source_package() -> None:
    by_format = {
        native.format: native
        for entry in default_catalog().entries()
        for native in (entry.native_transcripts, entry.recorded_wire)
        if native is not None
    }
    own = {"claude", "codex", "copilot", "gemini", "opencode"}
    recorded_wires = {"acp", "claude-wire", "codex-wire", "copilot-wire"}  # corral's own files
    assert set(by_format) == own | recorded_wires
    assert by_format["claude"].read is claude.read_native_transcript
    assert by_format["codex"].read is codex.read_native_transcript
    assert by_format["copilot"].read is copilot.read_native_transcript
    assert NativeReaders().get("codex") is codex.read_native_transcript
    for declared_by_acp in ("acp", "gemini", "opencode"):  # ACP agents' formats: sources/acp/
        assert by_format[declared_by_acp] is acp.NATIVE_TRANSCRIPTS[declared_by_acp]


def _never_launched(*args: object) -> Driver:
    raise AssertionError("an import launches no agent")


def test_a_catalog_entry_s_own_format_is_detected_and_read(tmp_path: Path) -> None:
    def read_notes(path: Path) -> list[ReplayItem]:
        return [PromptSent(text=path.read_text())]

    notes = NativeTranscripts(
        format="notes",
        name="Notes",
        recognizes=lambda line, path: line.get("kind") == "note",
        read=read_notes,
    )

    def entry(agent_id: str, native: NativeTranscripts | None) -> CatalogEntry:
        return CatalogEntry(id=agent_id, name=agent_id, executable=agent_id, install_hint="",
                            make_driver=_never_launched, native_transcripts=native)  # fmt: skip

    catalog = Catalog([entry("silent", None), entry("notes", notes)])
    readers = NativeReaders(formats=catalog.native_transcripts())
    path = tmp_path / "n.jsonl"
    path.write_text('{"hello": 1}\n{"kind": "note"}\n')
    assert readers.detect(path) == "notes"
    assert readers.format("notes").name == "Notes"
    assert list(readers.get("notes")(path)) == read_notes(path)


def test_given_readers_win() -> None:
    def reader(path: Path) -> list[ReplayItem]:
        return []

    assert NativeReaders({"claude": reader}).get("claude") is reader
