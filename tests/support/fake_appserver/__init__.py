"""A fake app-server agent, run as a real subprocess: `python -m tests.support.fake_appserver`.

It speaks the JSON-RPC wire of `app-server-notifications.schema.json` on
stdio, one message per line, and checks both directions against that
schema: every notification it sends must be a valid `ServerNotification`
(it exits with status 70 otherwise, so a test can never pass on a fake
that drifted from the seed), and every request it receives and every
result it returns must fit the schema's params and response definitions
(an invalid request gets a -32602 error).

The prompt's text picks the turn's script (first match wins):

    CRASH    a delta, then exit 3 with a line on stderr
    NOISE    a line that is not JSON on stdout, then text
    ASK_CLIENT  a server request (`client/pickColor`); the client's answer
             (corral refuses) is said back as text
    APPROVE  a tool call that asks `approval/requested` and waits for
             `approval/resolve`: allowed → the tool runs ("approved:
             <decision>"); denied → it fails ("denied: <reason>", or
             "(no reason)" when the resolve carried none)
    TOOL     a tool call (started, argument delta, completed), then text
    SLOW     a delta every 50 ms until `turn/steer` (answered queued, its
             text echoed, then the turn completes) or `turn/interrupt`
             (the turn completes `interrupted`)
    WARN     an `error/warning`, then text
    THREAD   says the `thread/start` params it received, as JSON (`null`
             for a resumed thread)
    METADATA says the `turn/start` metadata it received, as JSON
    PAUSE    the turn completes at a `wait_user` checkpoint (`<turn>-checkpoint`),
             which `turn/resume` takes up ("resumed <key>", then completed)
    FAIL     the turn completes `failed`
    anything "You said: <text>" in three deltas

Every completed turn carries `tokenUsage` and a `checkpoint`. With the
argument `--protocol-v2` it answers `initialize` with protocol "v2"; with
`--models` its capabilities say `modelList` and `model/list` lists
`fake-small` and `fake-large`.
"""

__all__ = ["MODULE"]

MODULE = "tests.support.fake_appserver"
