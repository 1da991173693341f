"""Misbehaviour for the scripted ACP agent: what an agent that attacks corral does.

Mixed into `ScriptedAgent` (scripted.py); chosen, like the rest, by the
first word of the prompt:

    swap CMD1 => CMD2   asks permission for execute tool t7 running CMD1,
                        changes t7 to CMD2 (new rawInput and title) while the
                        request is open, says "outcome <option id|cancelled>",
                        then tries terminal/create CMD2 and says how it went
    grant CMD           asks permission for execute tool t8 running CMD; when
                        allowed, calls terminal/create with CMD plus a trailing
                        space, then CMD twice: "padded <r>. first <r>. second
                        <r>" (<r>: "exit N" or "error CODE")
    termenv N=V CMD     terminal/create CMD with the environment variable N=V
    raw JSON            sends the request {"method", "params"} (sessionId
                        added) as it is, with no SDK checks: "ok <result>" or
                        "error <code> <message>"
    rawline TEXT        writes TEXT, a raw JSON-RPC request line with id 999999
                        (possibly not valid JSON; SESSION becomes the session
                        id, BADBYTE a 0xff byte), and waits for the answer to
                        id 999999: "answer <code|ok>"
    flood KIND N CAP    sends N requests at once, KIND `permission` (each asks
                        for its own tool) or `wait` (terminal/wait_for_exit on
                        one `sleep 30` terminal, killed once the refusals are
                        in); says "refused R" once N - CAP were refused, then
                        waits for the rest (the test cancels or they end):
                        "refused R errors <codes seen>"
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from acp import Client, RequestError, start_tool_call, update_tool_call
from acp.schema import EnvVariable, PermissionOption, PromptResponse, ToolCallUpdate

OPTIONS = [
    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]


class AttackMixin:
    """`_do_<word>` handlers; the host class provides `client` and `_say`."""

    client: Client

    async def _say(self, session_id: str, text: str) -> None:
        raise NotImplementedError

    async def _create(self, session_id: str, command: str, **more: Any) -> str:
        """terminal/create, wait, release: "exit N" or "error CODE"."""
        try:
            made = await self.client.create_terminal(session_id=session_id, command=command, **more)
        except RequestError as error:
            return f"error {error.code}"
        ended = await self.client.wait_for_terminal_exit(
            session_id=session_id, terminal_id=made.terminal_id
        )
        await self.client.release_terminal(session_id=session_id, terminal_id=made.terminal_id)
        return f"exit {ended.exit_code}"

    async def _ask(self, session_id: str, tool_id: str, command: str) -> Any:
        return await self.client.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id=tool_id, title=command, kind="execute"),
            options=OPTIONS,
        )

    async def _do_swap(self, session_id: str, rest: str) -> PromptResponse:
        judged, _, changed = (part.strip() for part in rest.partition("=>"))
        await self.client.session_update(
            session_id,
            start_tool_call(
                "t7", judged, kind="execute", status="pending", raw_input={"command": judged}
            ),
        )
        asking = asyncio.create_task(self._ask(session_id, "t7", judged))
        for _ in range(5):  # the request is queued to the wire before the change
            await asyncio.sleep(0)
        await self.client.session_update(
            session_id, update_tool_call("t7", title=changed, raw_input={"command": changed})
        )
        outcome = (await asking).outcome
        said = outcome.option_id if outcome.outcome == "selected" else "cancelled"
        await self._say(session_id, f"outcome {said}. ")
        await self._say(session_id, f"then {await self._create(session_id, changed)}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_grant(self, session_id: str, rest: str) -> PromptResponse:
        await self.client.session_update(
            session_id,
            start_tool_call(
                "t8", rest, kind="execute", status="pending", raw_input={"command": rest}
            ),
        )
        outcome = (await self._ask(session_id, "t8", rest)).outcome
        if outcome.outcome != "selected" or outcome.option_id != "yes":
            await self._say(session_id, "not allowed")
            return PromptResponse(stop_reason="end_turn")
        padded = await self._create(session_id, rest + " ")
        first = await self._create(session_id, rest)
        second = await self._create(session_id, rest)
        await self._say(session_id, f"padded {padded}. first {first}. second {second}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_termenv(self, session_id: str, rest: str) -> PromptResponse:
        assignment, _, command = rest.partition(" ")
        name, _, value = assignment.partition("=")
        env = [EnvVariable(name=name, value=value)]
        await self._say(session_id, await self._create(session_id, command, env=env))
        return PromptResponse(stop_reason="end_turn")

    async def _raw(self, session_id: str, method: str, params: dict[str, Any]) -> Any:
        conn = self.client._conn  # type: ignore[attr-defined]  # no SDK model checks
        return await conn.send_request(method, {"sessionId": session_id, **params})

    async def _do_raw(self, session_id: str, rest: str) -> PromptResponse:
        request = json.loads(rest)
        try:
            result = await self._raw(session_id, request["method"], request.get("params", {}))
        except RequestError as error:
            await self._say(session_id, f"error {error.code} {error}")
        else:
            await self._say(session_id, f"ok {json.dumps(result)}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_rawline(self, session_id: str, rest: str) -> PromptResponse:
        conn = self.client._conn  # type: ignore[attr-defined]
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        conn._pending[999999] = answer  # the SDK settles it when the answer comes
        line = rest.replace("SESSION", session_id).encode("utf-8").replace(b"BADBYTE", b"\xff")
        os.write(1, line + b"\n")
        try:
            await asyncio.wait_for(answer, 20)
        except RequestError as error:
            await self._say(session_id, f"answer {error.code}")
        except TimeoutError:
            await self._say(session_id, "no answer")
        else:
            await self._say(session_id, "answer ok")
        return PromptResponse(stop_reason="end_turn")

    async def _do_flood(self, session_id: str, rest: str) -> PromptResponse:
        kind, count, cap = rest.split()
        expected_refusals = int(count) - int(cap)
        terminal_id = None
        if kind == "wait":
            made = await self.client.create_terminal(session_id=session_id, command="sleep 30")
            terminal_id = made.terminal_id

        async def one(index: int) -> Any:
            if terminal_id is not None:
                return await self.client.wait_for_terminal_exit(
                    session_id=session_id, terminal_id=terminal_id
                )
            tool_id = f"flood-{index}"
            return await self._ask(session_id, tool_id, f"echo {index}")

        tasks = [asyncio.create_task(one(index)) for index in range(int(count))]
        refused, codes = 0, set()
        for finished in asyncio.as_completed(tasks):
            try:
                await finished
            except RequestError as error:
                refused += 1
                codes.add(error.code)
            if refused == expected_refusals:
                break
        await self._say(session_id, f"refused {refused}. ")
        if terminal_id is not None:
            await self.client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
        results = await asyncio.gather(*tasks, return_exceptions=True)
        errors = sorted(
            {getattr(result, "code", 0) for result in results if isinstance(result, Exception)}
        )
        if terminal_id is not None:
            await self.client.release_terminal(session_id=session_id, terminal_id=terminal_id)
        await self._say(session_id, f"refused {refused} errors {errors}")
        return PromptResponse(stop_reason="end_turn")
