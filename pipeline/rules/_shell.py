"""Shell command lines, split into the simple commands they would run.

A sans-IO reader of POSIX shell syntax, just enough to judge a command line
before it runs. In: one command line. Out: a `ShellLine` holding every
simple command the line runs, flattened (top level, pipelines, `&&` `||`
`;` `&` lists, subshells `( )`, groups `{ }`, command substitutions `$( )`
and backticks, process substitutions `<( )` `>( )`, the body of a heredoc
fed to a shell, and the string of `sh -c` / `eval`), each with its words
(quotes removed by `shlex`) and its redirections; plus the pipelines.

Quotes are followed exactly: an operator inside quotes is text, but a
substitution inside double quotes still runs and is read. Nothing is
expanded: `$HOME`, `~` and globs stay literal; a substitution's place in a
word is the placeholder `$(...)` (`<(...)` and `>(...)` for process
substitutions, which stand for a file name).

When the reader meets what it cannot follow (an unclosed quote or
parenthesis, a stray `)` as in `case` patterns) the line comes back with
`parsed=False` and one command made of the whitespace-split line: callers
treat it as unknown, never as harmless.
"""

from __future__ import annotations

import shlex

import attrs

from ._programs import is_shell, program_of
from ._shell_words import (
    SUBSTITUTION,
    Unparsable,
    command_words,
    no_hidden_commands,
    script_argument,
)

__all__ = ["PROCESS_SUBSTITUTIONS", "Redirect", "ShellLine", "SimpleCommand", "parse_shell"]

# A process substitution's place in a word: a file name the shell makes.
PROCESS_SUBSTITUTIONS = ("<(...)", ">(...)")
_OPERATOR_CHARS = frozenset(";&|()<>\n")


@attrs.frozen
class Redirect:
    op: str  # >, >>, >|, &>, &>>, <, <<, <<-, <<<, <>, >&, <&
    target: str


@attrs.frozen(kw_only=True)
class SimpleCommand:
    """One command: its words, its redirections, what runs inside it."""

    words: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    inner: tuple[SimpleCommand, ...] = ()  # substitutions, subshell body, `sh -c` string

    @property
    def text(self) -> str:
        """The words joined by single spaces: what command rules match."""
        return " ".join(self.words)


@attrs.frozen(kw_only=True)
class ShellLine:
    line: str
    commands: tuple[SimpleCommand, ...]  # every command with words, inner ones first
    pipelines: tuple[tuple[SimpleCommand, ...], ...] = ()  # those of two stages or more
    parsed: bool = True


def parse_shell(line: str) -> ShellLine:
    reader = _Reader(line)
    try:
        reader.sequence(None)
    except (Unparsable, ValueError):
        fallback = SimpleCommand(words=tuple(line.split()))
        return ShellLine(line=line, commands=(fallback,) if fallback.words else (), parsed=False)
    return ShellLine(line=line, commands=tuple(reader.commands), pipelines=tuple(reader.pipelines))


class _Segment:
    """The simple command being read: text for shlex, redirections, inner commands."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.redirects: list[Redirect] = []
        self.inner: list[SimpleCommand] = []

    def at_start(self) -> bool:
        return not "".join(self.text).strip() and not self.redirects and not self.inner

    def at_word_start(self) -> bool:
        return not self.text or self.text[-1] in " \t"


_MAX_DEPTH = 32  # nested substitutions and `sh -c` strings before the line counts as unread


class _Reader:
    def __init__(self, line: str, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise Unparsable("nested too deep")
        self.line = line
        self.depth = depth
        self.index = 0
        self.commands: list[SimpleCommand] = []
        self.pipelines: list[tuple[SimpleCommand, ...]] = []
        self.heredocs: list[tuple[str, bool]] = []  # delimiter, strip leading tabs
        self.line_start = 0  # the first command of the current physical line

    def peek(self, count: int = 1) -> str:
        return self.line[self.index : self.index + count]

    def sequence(self, closer: str | None) -> None:
        """Read commands up to `closer` (consumed) or the end of the line."""
        pipeline: list[SimpleCommand] = []
        segment = _Segment()
        while True:
            if self.index >= len(self.line):
                if closer is not None:
                    raise Unparsable(f"missing {closer!r}")
                self._end_pipeline(pipeline, self._finish(segment))
                return
            char = self.line[self.index]
            if char == closer:
                self.index += 1
                self._end_pipeline(pipeline, self._finish(segment))
                return
            if char not in _OPERATOR_CHARS:
                self._text(segment)
            elif self._operator(segment, pipeline):
                segment = _Segment()

    def _operator(self, segment: _Segment, pipeline: list[SimpleCommand]) -> bool:
        """Handle an operator character; True if it ended the segment."""
        two = self.peek(2)
        if two in ("<(", ">("):
            self.index += 2
            segment.text.append(f"'{two}...)'")
            segment.inner.extend(self._nested(")"))
            return False
        if two in ("&>", ">&", "<&") or self.peek() in "<>":
            self._redirect(segment)
            return False
        if self.peek() == "(":
            self._parenthesis(segment)
            return False
        if self.peek() == ")":
            raise Unparsable("unexpected )")
        if two == "|&" or (self.peek() == "|" and two != "||"):
            self.index += len(two) if two == "|&" else 1
            pipeline.append(self._finish(segment))
            return True
        for op in ("&&", "||", ";;", ";", "&", "\n"):
            if self.line.startswith(op, self.index):
                break
        self.index += len(op)
        self._end_pipeline(pipeline, self._finish(segment))
        if op == "\n":
            self._heredoc_bodies()
        return True

    def _parenthesis(self, segment: _Segment) -> None:
        """A subshell, a function definition's `()`, or an array `a=(...)`."""
        if self.peek(2) == "()" and not segment.at_start():
            self.index += 2
            segment.text.append("()")
        elif segment.text and segment.text[-1] == "=":
            self.index += 1
            elements = _Segment()
            while self.index < len(self.line) and self.peek() != ")":
                self._text(elements)
            if self.index >= len(self.line):
                raise Unparsable("unclosed array")
            self.index += 1
            segment.text.append("(...)")
            segment.inner.extend(elements.inner)
        elif segment.at_start():
            self.index += 1
            segment.inner.extend(self._nested(")"))
        else:
            raise Unparsable("unexpected (")

    def _text(self, segment: _Segment) -> None:
        char = self.line[self.index]
        if char == "\\":
            pair = self.peek(2)
            self.index += 2
            if pair != "\\\n":  # a line continuation is nothing
                segment.text.append(pair)
        elif char == "'":
            end = self.line.find("'", self.index + 1)
            if end < 0:
                raise Unparsable("unclosed '")
            segment.text.append(self.line[self.index : end + 1])
            self.index = end + 1
        elif char == '"':
            self._double_quoted(segment)
        elif char == "`" or (char == "$" and self.peek(2) in ("$(", "${")):
            self._dollar(segment, segment.text)
        elif char == "#" and segment.at_word_start():
            end = self.line.find("\n", self.index)
            self.index = len(self.line) if end < 0 else end
        else:
            segment.text.append(char)
            self.index += 1

    def _double_quoted(self, segment: _Segment) -> None:
        out = ['"']
        self.index += 1
        while True:
            if self.index >= len(self.line):
                raise Unparsable('unclosed "')
            char = self.line[self.index]
            if char == "\\":
                out.append(self.peek(2))
                self.index += 2
            elif char == '"':
                self.index += 1
                out.append('"')
                segment.text.append("".join(out))
                return
            elif char == "`" or (char == "$" and self.peek(2) in ("$(", "${")):
                self._dollar(segment, out)
            else:
                out.append(char)
                self.index += 1

    def _dollar(self, segment: _Segment, out: list[str]) -> None:
        """A `$(...)`, `$((...))`, `${...}` or backtick at the reading position."""
        if self.peek(3) == "$((":
            start, self.index = self.index, self._closing(self.index + 3, 2)
            no_hidden_commands(self.line[start + 3 : self.index])
            out.append("$((...))")
        elif self.peek(2) == "${":
            end = self.line.find("}", self.index)
            if end < 0:
                raise Unparsable("unclosed ${")
            no_hidden_commands(self.line[self.index + 2 : end])
            out.append(self.line[self.index : end + 1])
            self.index = end + 1
        elif self.peek() == "`":
            end = self.index + 1
            while end < len(self.line) and self.line[end] != "`":
                end += 2 if self.line[end] == "\\" else 1
            if end >= len(self.line):
                raise Unparsable("unclosed `")
            body = self.line[self.index + 1 : end].replace("\\`", "`")
            self.index = end + 1
            segment.inner.extend(self._separately(body))
            out.append(SUBSTITUTION)
        else:
            self.index += 2
            segment.inner.extend(self._nested(")"))
            out.append(SUBSTITUTION)

    def _closing(self, index: int, depth: int) -> int:
        """The index after the parentheses that close `depth` open ones."""
        while depth:
            if index >= len(self.line):
                raise Unparsable("unclosed $((")
            depth += {"(": 1, ")": -1}.get(self.line[index], 0)
            index += 1
        return index

    def _redirect(self, segment: _Segment) -> None:
        fd = ""
        while segment.text and segment.text[-1].isdigit() and len(segment.text[-1]) == 1:
            fd = segment.text.pop() + fd  # `2>`: the digits name a descriptor
        if fd and not segment.at_word_start():
            segment.text.append(fd)  # digits inside a word (`a2>x`) stay in the word
        for op in ("&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<&", "<<", "<>", ">", "<"):
            if self.line.startswith(op, self.index):
                break
        self.index += len(op)
        while self.peek() in (" ", "\t"):
            self.index += 1
        target = _Segment()
        while self.index < len(self.line) and self.peek() not in " \t" + "".join(_OPERATOR_CHARS):
            self._text(target)
        words = shlex.split("".join(target.text))
        if not words:
            raise Unparsable(f"{op} without a target")
        segment.inner.extend(target.inner)
        segment.redirects.append(Redirect(op, words[0]))
        if op in ("<<", "<<-"):
            self.heredocs.append((words[0], op == "<<-"))

    def _heredoc_bodies(self) -> None:
        """After a newline: skip each heredoc's body; read it if a shell runs it."""
        fed_to_shell = any(
            is_shell(program_of(command.words)[0]) for command in self.commands[self.line_start :]
        )
        for delimiter, strip_tabs in self.heredocs:
            body: list[str] = []
            while self.index < len(self.line):
                end = self.line.find("\n", self.index)
                end = len(self.line) if end < 0 else end
                text = self.line[self.index : end]
                self.index = min(end + 1, len(self.line))
                if (text.lstrip("\t") if strip_tabs else text) == delimiter:
                    break
                body.append(text)
            if fed_to_shell:
                self._separately("\n".join(body))
        self.heredocs.clear()
        self.line_start = len(self.commands)

    def _nested(self, closer: str) -> list[SimpleCommand]:
        if self.depth >= _MAX_DEPTH:
            raise Unparsable("nested too deep")
        start = len(self.commands)
        self.depth += 1
        self.sequence(closer)
        self.depth -= 1
        return [command for command in self.commands[start:] if command.words]

    def _separately(self, text: str) -> list[SimpleCommand]:
        """Read a line that runs elsewhere (backticks, `sh -c`); its commands join ours."""
        reader = _Reader(text, self.depth + 1)
        reader.sequence(None)
        self.commands.extend(reader.commands)
        self.pipelines.extend(reader.pipelines)
        return [command for command in reader.commands if command.words]

    def _finish(self, segment: _Segment) -> SimpleCommand:
        words = command_words(shlex.split("".join(segment.text)))
        inner = list(segment.inner)
        program, arguments = program_of(tuple(words))
        if program == "find":
            inner.extend(self._find_commands(arguments))
        if is_shell(program) or program == "eval":
            inner.extend(self._separately(script_argument(program, arguments)))
        command = SimpleCommand(
            words=tuple(words), redirects=tuple(segment.redirects), inner=tuple(inner)
        )
        if command.words:
            self.commands.append(command)
        return command

    def _find_commands(self, arguments: tuple[str, ...]) -> list[SimpleCommand]:
        """`find ... -exec CMD {} ;` runs CMD: it is a command of the line too."""
        found = []
        for index, argument in enumerate(arguments):
            if argument in ("-exec", "-execdir", "-ok", "-okdir"):
                words = []
                for word in arguments[index + 1 :]:
                    if word in (";", "+"):
                        break
                    words.append(word)
                if words:
                    found.append(self._exec_command(tuple(words)))
        self.commands.extend(found)
        return found

    def _exec_command(self, words: tuple[str, ...]) -> SimpleCommand:
        """A command `find` runs; a shell's `-c` string is read like any other."""
        program, arguments = program_of(words)
        inner: list[SimpleCommand] = []
        if is_shell(program) or program == "eval":
            inner = self._separately(script_argument(program, arguments))
        return SimpleCommand(words=words, inner=tuple(inner))

    def _end_pipeline(self, pipeline: list[SimpleCommand], last: SimpleCommand) -> None:
        pipeline.append(last)
        stages = [stage for stage in pipeline if stage.words or stage.inner]
        if len(stages) > 1:
            self.pipelines.append(tuple(stages))
        pipeline.clear()
