"""Login state: whether an agent is signed in, and how to sign it in.

`AuthStatus` is a closed union: `UnknownAuth` (the agent does not say),
`Authenticated` (with the kind of credentials and, when known, the account),
`Unauthenticated` (with the login methods the agent offers: a terminal
command, or an environment variable to set). On the wire a unit variant is a
bare string and a data variant a one-key object; `auth_to_wire` and
`auth_from_wire` are the only places that know that shape.
"""

from __future__ import annotations

import enum

import attrs

from ._shape import Fields, ShapeError, as_str, tag_of

__all__ = [
    "AccountInfo",
    "AuthKind",
    "AuthStatus",
    "Authenticated",
    "EnvVarLogin",
    "LoginMethod",
    "OtherAuth",
    "TerminalLogin",
    "Unauthenticated",
    "UnknownAuth",
    "auth_from_wire",
    "auth_to_wire",
]


class AuthKind(enum.StrEnum):
    SUBSCRIPTION = "Subscription"
    API_KEY = "ApiKey"
    CLOUD_PROVIDER = "CloudProvider"


@attrs.frozen
class OtherAuth:
    name: str


@attrs.frozen(kw_only=True)
class AccountInfo:
    email: str | None = None
    plan: str | None = None


@attrs.frozen
class UnknownAuth:
    pass


@attrs.frozen(kw_only=True)
class Authenticated:
    kind: AuthKind | OtherAuth
    account: AccountInfo | None = None


@attrs.frozen(kw_only=True)
class TerminalLogin:
    command: tuple[str, ...]
    description: str
    env: tuple[tuple[str, str], ...] = ()


@attrs.frozen(kw_only=True)
class EnvVarLogin:
    name: str


LoginMethod = TerminalLogin | EnvVarLogin


@attrs.frozen(kw_only=True)
class Unauthenticated:
    login: tuple[LoginMethod, ...] = ()


AuthStatus = UnknownAuth | Authenticated | Unauthenticated


def auth_to_wire(auth: AuthStatus) -> object:
    match auth:
        case UnknownAuth():
            return "Unknown"
        case Authenticated(kind=kind, account=account):
            return {
                "Authenticated": {
                    "kind": {"Other": kind.name} if isinstance(kind, OtherAuth) else kind.value,
                    "account": None
                    if account is None
                    else {"email": account.email, "plan": account.plan},
                }
            }
        case Unauthenticated(login=login):
            methods: list[object] = []
            for method in login:
                if isinstance(method, TerminalLogin):
                    methods.append(
                        {
                            "Terminal": {
                                "command": list(method.command),
                                "env": dict(method.env),
                                "description": method.description,
                            }
                        }
                    )
                else:
                    methods.append({"EnvVar": {"name": method.name}})
            return {"Unauthenticated": {"login": methods}}


def auth_from_wire(raw: object, path: str) -> AuthStatus:
    tag, payload = tag_of(raw, path, frozenset({"Unknown"}))
    if payload is None:
        return UnknownAuth()
    fields = Fields(payload, f"{path}.{tag}")
    if tag == "Authenticated":
        kind_tag, kind_payload = tag_of(
            fields.value("kind"), f"{fields.path}.kind", frozenset(k.value for k in AuthKind)
        )
        if kind_payload is None:
            kind: AuthKind | OtherAuth = AuthKind(kind_tag)
        elif kind_tag == "Other":
            kind = OtherAuth(as_str(kind_payload, f"{fields.path}.kind.Other"))
        else:
            raise ShapeError(f"{fields.path}.kind", f"unknown auth kind {kind_tag!r}")
        account = fields.opt_obj("account")
        return Authenticated(
            kind=kind,
            account=None
            if account is None
            else AccountInfo(email=account.opt_string("email"), plan=account.opt_string("plan")),
        )
    if tag == "Unauthenticated":
        methods: list[LoginMethod] = []
        for item_path, item in fields.array("login"):
            method_tag, method_payload = tag_of(item, item_path)
            method = Fields(method_payload, f"{item_path}.{method_tag}")
            if method_tag == "Terminal":
                methods.append(
                    TerminalLogin(
                        command=method.strings("command"),
                        description=method.string("description"),
                        env=tuple(method.string_map("env").items()),
                    )
                )
            elif method_tag == "EnvVar":
                methods.append(EnvVarLogin(name=method.string("name")))
            else:
                raise ShapeError(item_path, f"unknown login method {method_tag!r}")
        return Unauthenticated(login=tuple(methods))
    raise ShapeError(path, f"unknown auth status {tag!r}")
