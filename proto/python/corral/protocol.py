"""What the sync and asyncio clients share: the error codes, the error types, and how
params and notifications are encoded and decoded (proto/PROTOCOL.md)."""

from __future__ import annotations

import base64
from typing import Any, Dict, Optional, Sequence, Tuple, Union

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REFUSED = -32001
TIER_UNAVAILABLE = -32002
LIMIT_EXCEEDED = -32003
TIMEOUT = -32004
CONFIG_ERROR = -32005
SPAWN_FAILED = -32006
NOT_FOUND = -32012
CONFLICT = -32011

# Notifications addressed to a session (by its id) rather than to a call.
SESSION_NOTIFICATIONS = ("session.output", "session.stderr", "session.ended", "session.refused",
                         "session.network", "session.writer_lost")

Json = Dict[str, Any]

# One piece of an execution's live output, as exec_stream yields it: ("stdout" or "stderr",
# the bytes exactly as the program wrote them).
OutputEvent = Tuple[str, bytes]

# How long leaving an exec_stream's `with` block early waits for the cancelled execution to
# end (seconds): half of it after the first cancel (SIGTERM, then SIGKILL after the
# profile's grace), the rest after a second one (which kills at once).
STREAM_CLOSE_TIMEOUT = 10.0


class CorralError(Exception):
    """The daemon answered with an error (see PROTOCOL.md for the codes)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__("%s (%d)" % (message, code))
        self.code = code
        self.message = message
        self.data = data


class ConnectionLost(CorralError):
    def __init__(self, why: str) -> None:
        super().__init__(INTERNAL_ERROR, "connection to the corral daemon lost: %s" % why)


def put_bytes(params: Json, key: str, data: Union[str, bytes]) -> None:
    """Sets params[key] to text, or params[key + "_base64"] when the bytes are not UTF-8."""
    if isinstance(data, bytes):
        try:
            params[key] = data.decode("utf-8")
        except UnicodeDecodeError:
            params[key + "_base64"] = base64.b64encode(data).decode("ascii")
    else:
        params[key] = data


def chunk_bytes(params: Json) -> bytes:
    """The bytes of an output notification (data or data_base64)."""
    if "data_base64" in params:
        return base64.b64decode(params["data_base64"])
    return params.get("data", "").encode("utf-8")


def output_stream(params: Json) -> str:
    """Which stream an exec.output notification carries: "stdout" or "stderr"."""
    return "stdout" if params.get("stream") == "stdout" else "stderr"


def exec_params(argv: Optional[Sequence[str]], language: Optional[str], code: Optional[str],
                stdin: Union[str, bytes, None], timeout: Optional[float], stream: bool,
                extra: Json) -> Json:
    params = dict(extra)
    if argv is not None:
        params["argv"] = list(argv)
    if language is not None:
        params["language"] = language
    if code is not None:
        params["code"] = code
    if stdin is not None:
        put_bytes(params, "stdin", stdin)
    if timeout is not None:
        params["timeout"] = timeout
    params["stream"] = stream
    return params


def session_params(argv: Optional[Sequence[str]], kind: str, forward_stderr: bool, extra: Json) -> Json:
    params = dict(extra, kind=kind)
    if argv is not None:
        params["argv"] = list(argv)
    if forward_stderr:
        params["forward_stderr"] = True
    return params


def write_params(session: Optional[str], data: Union[str, bytes]) -> Json:
    params: Json = {"session": session}
    put_bytes(params, "data", data)
    return params


def result_of(reply: Json) -> Any:
    """The reply's result, or its error raised as CorralError."""
    if "error" in reply:
        e = reply["error"]
        raise CorralError(e.get("code", INTERNAL_ERROR), e.get("message", ""), e.get("data"))
    return reply["result"]


def lost_session_end(session_id: Optional[str]) -> Json:
    return {"session": session_id, "reason": "connection_lost", "exit_code": None, "signal": None,
            "stderr_tail": ""}


def attach_params(workspace: str, terminal: Optional[str], writer: bool, take_over: bool) -> Json:
    """workspace.attach's params: the latest terminal when none is named."""
    params: Json = {"workspace": workspace, "writer": writer, "take_over": take_over}
    if terminal is not None:
        params["terminal"] = terminal
    return params
