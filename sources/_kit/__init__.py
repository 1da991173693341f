"""The plumbing every JSON-RPC agent source shares, written once.

A provider (ACP, the app-server wire, Copilot, Codex) supplies two things:
a translator (agent frames in, `DriverEvent`s out) and an encoder (the
engine's commands onto its wire). Everything between the agent's process
and those two lives here:

- `problems`: what the agent wrote that is not its protocol, as a typed
  `WireProblem` with a closed set of kinds (the metric labels), turned into
  a Warning `Diagnostic` one way, and counted in one place (`tally`);
- `inbox`: the one reader over the agent's frames and the driver's own
  events; local events are typed `Local` values, served first or, where
  their order against the agent's frames matters, behind them;
- `handshake`: the one error for an agent that exits during its handshake;
- `driver`: `JsonRpcDriver`, which owns the process, the pump, the inbox,
  the reading loop and the stop (a frame that needs no waiting, the bulk
  of a stream, is translated without a coroutine: `_translate_now`);
- `recent`: a reading of decoded JSON remembered for the last few values
  (the lists agents resend: slash commands, modes, models, options);
- `quick`: a text chunk's `Emitted` built with the least Python.

The modules are imported by path (`from .._kit.driver import ...`): this
package imports nothing itself, so `_jsonrpc` can build on `problems`
while `driver` builds on `_jsonrpc`.
"""
