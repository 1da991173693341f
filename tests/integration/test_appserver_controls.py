"""The app-server's `model` option (from `model/list`) and checkpoint resume (`turn/resume`).

Against the fake app-server, a real subprocess that checks every request
and result against the seed schema: with `--models` it says `modelList`
and lists `fake-small` and `fake-large`; `METADATA` says back the
`turn/start` metadata; `PAUSE` stops the turn at a `wait_user` checkpoint
that `turn/resume` takes up. Every corral event is checked against the
line-protocol schema by the watcher.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import AppServerRef, McpServer
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import Completed, Diagnostic, Event, TextDelta, TurnEnded
from corral.sources.appserver import catalog_entry
from corral.sources.catalog import Catalog

from tests.support.fake_appserver.drive import REPO_ROOT, Watcher, fake_ref

ENV = (("PYTHONPATH", str(REPO_ROOT)),)
Opener = Callable[..., Awaitable[Watcher]]


def with_models() -> AppServerRef:
    base = fake_ref()
    return AppServerRef(name=base.name, path=base.path, args=(*base.args, "--models"))


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(catalog=Catalog([catalog_entry()]), transcripts=False) as rt:
        yield rt


@pytest.fixture
def open_fake(runtime: Runtime, tmp_path: Path) -> Opener:
    async def open_(ref: AppServerRef | None = None, **options: object) -> Watcher:
        session = await runtime.open(ref or fake_ref(), str(tmp_path), env=ENV, **options)
        return Watcher(session)

    return open_


def text_of(events: list[Event]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))


def stop_of(events: list[Event]) -> object:
    last = events[-1].kind
    assert isinstance(last, TurnEnded)
    return last.stop


async def said_metadata(watcher: Watcher) -> object:
    await watcher.session.prompt("METADATA")
    return json.loads(text_of(await watcher.until("TurnEnded")))


# ---- model/list → the `model` option ------------------------------------------------


async def test_the_listed_models_are_the_live_model_option(open_fake: Opener) -> None:
    watcher = await open_fake(with_models())
    options = {o.id: o for o in watcher.session.info().details.config_options}
    model = options["model"]
    assert model.live
    assert [(c.value, c.label) for c in model.choices] == [
        ("fake-small", "Fake Small"),
        ("fake-large", "fake-large"),
    ]
    assert await said_metadata(watcher) is None  # nothing chosen: nothing sent
    await watcher.session.close()


async def test_a_configured_model_rides_on_the_next_turn_start(open_fake: Opener) -> None:
    watcher = await open_fake(with_models())
    info = await watcher.session.configure("model", "fake-large")
    assert dict(info.options)["model"] == "fake-large"
    assert await said_metadata(watcher) == {"model": "fake-large"}
    await watcher.session.close()


async def test_a_model_chosen_at_open_rides_on_the_first_turn(open_fake: Opener) -> None:
    watcher = await open_fake(with_models(), configure=(("model", "fake-small"),))
    assert dict(watcher.session.info().options)["model"] == "fake-small"
    assert await said_metadata(watcher) == {"model": "fake-small"}
    await watcher.session.close()


async def test_a_model_the_server_does_not_list_is_refused_at_open(
    runtime: Runtime, tmp_path: Path
) -> None:
    with pytest.raises(CorralError) as failed:
        await runtime.open(with_models(), str(tmp_path), env=ENV, configure=(("model", "gpt"),))
    assert failed.value.kind is ErrorKind.INVALID_CONFIGURATION
    assert runtime.sessions() == []


async def test_without_model_list_there_is_no_model_to_configure(open_fake: Opener) -> None:
    watcher = await open_fake()
    assert watcher.session.info().details.config_options == ()
    with pytest.raises(CorralError) as failed:
        await watcher.session.configure("model", "fake-large")
    assert failed.value.kind is ErrorKind.INVALID_CONFIGURATION
    await watcher.session.close()


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"fork": "thread-1"}, "fork"),
        ({"mcp_servers": (McpServer(name="t", transport="Stdio", command="mcp"),)}, "mcp_servers"),
    ],
)
async def test_a_server_with_models_still_cannot_fork_or_reach_mcp_servers(
    runtime: Runtime, tmp_path: Path, options: dict[str, object], option: str
) -> None:
    with pytest.raises(CorralError) as failed:
        await runtime.open(with_models(), str(tmp_path), env=ENV, **options)
    assert failed.value.kind is ErrorKind.UNSUPPORTED_FEATURE
    assert failed.value.fields["option"] == option


# ---- checkpoints → the resume token → turn/resume ----------------------------------------


CHECKPOINT_TOKEN = "thread-1#turn-1#turn-1-checkpoint"


async def test_a_wait_user_checkpoint_is_named_by_the_resume_token(open_fake: Opener) -> None:
    watcher = await open_fake()
    await watcher.session.prompt("PAUSE here")
    await watcher.until("TurnEnded")
    assert watcher.session.info().resume_token == CHECKPOINT_TOKEN
    await watcher.session.prompt("hello")  # a new turn, not a resume; its checkpoint is final
    assert text_of(await watcher.until("TurnEnded")) == "You said: hello"
    assert watcher.session.info().resume_token == "thread-1"
    await watcher.session.close()


async def test_opening_at_a_checkpoint_resumes_it_with_the_first_prompt(
    open_fake: Opener,
) -> None:
    watcher = await open_fake(resume=CHECKPOINT_TOKEN)
    assert watcher.session.info().resume_token == CHECKPOINT_TOKEN
    await watcher.session.prompt("go on")
    events = await watcher.until("TurnEnded")
    assert text_of(events) == "resumed turn-1-checkpoint"
    assert stop_of(events) == Completed()
    notes = [e.kind.message for e in events if isinstance(e.kind, Diagnostic)]
    assert any("resuming checkpoint turn-1-checkpoint" in n and "not sent" in n for n in notes)
    assert watcher.session.info().resume_token == "thread-1"
    await watcher.session.prompt("and then")  # the checkpoint is spent: a plain turn
    assert text_of(await watcher.until("TurnEnded")) == "You said: and then"
    await watcher.session.close()


async def test_a_checkpoint_the_server_does_not_know_fails_the_first_turn(
    open_fake: Opener,
) -> None:
    watcher = await open_fake(resume="thread-1#turn-4#nope")
    await watcher.session.prompt("go on")
    events = await watcher.until("TurnEnded")
    stop = stop_of(events)
    assert not isinstance(stop, Completed)
    assert "unknown checkpoint nope" in str(stop)
    await watcher.session.close()
