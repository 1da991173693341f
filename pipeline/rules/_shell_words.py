"""The words of a shell line: keywords taken off, a shell's script found.

Helpers of the shell reader (`_shell.py`), kept apart so that module holds
only the reader itself. Sans-IO and pure: each takes words or text already
cut by the reader and gives back words or text; what cannot be followed
raises `Unparsable`, which the reader turns into a line with `parsed=False`.
"""

from __future__ import annotations

__all__ = ["SUBSTITUTION", "Unparsable", "command_words", "no_hidden_commands", "script_argument"]

SUBSTITUTION = "$(...)"
_LEADING_KEYWORDS = frozenset({"!", "then", "do", "else", "elif", "if", "while", "until", "{"})
_NOT_COMMANDS = frozenset({"for", "select", "case", "in", "esac"})
_ENDINGS = frozenset({"fi", "done", "}", "esac"})


class Unparsable(Exception):
    pass


def no_hidden_commands(text: str) -> None:
    """`${x:-$(cmd)}`, `$(( $(cmd) ))`: a command this reader would not see."""
    if "$(" in text or "`" in text or "<(" in text or ">(" in text:
        raise Unparsable("a command inside ${...} or $((...))")


def command_words(words: list[str]) -> list[str]:
    """The words of a command once shell keywords and definitions are taken off."""
    while words:
        if words[0] in _LEADING_KEYWORDS:
            words = words[1:]
        elif words[0] == "function":
            words = words[2:]  # `function name {`
        elif len(words) > 1 and words[1] == "()":
            words = words[2:]  # `name () {`
        elif words[0].endswith("()"):
            words = words[1:]  # `name() {`
        else:
            break
    if words and (words[0] in _NOT_COMMANDS or (len(words) == 1 and words[0] in _ENDINGS)):
        return []
    return words


def script_argument(program: str, arguments: tuple[str, ...]) -> str:
    """The text a shell runs from its arguments: `-c STRING`, or all of `eval`'s."""
    # A substitution's output is unknown here (its commands are read already):
    # it stays one inert word instead of being read as `$(` again.
    inert = tuple(argument.replace(SUBSTITUTION, "'$(...)'") for argument in arguments)
    if program == "eval":
        return " ".join(inert)
    for index, argument in enumerate(inert):
        if argument == "--":
            return ""
        if argument.startswith("-") and not argument.startswith("--") and "c" in argument:
            return inert[index + 1] if index + 1 < len(inert) else ""
    return ""
