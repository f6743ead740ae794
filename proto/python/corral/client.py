"""A client for the corral daemon (proto/PROTOCOL.md), standard library only.

    from corral import Client
    with Client("/run/corral/corral.sock") as c:
        r = c.exec(argv=["python3", "-c", "print(1)"], on_stdout=print)
        r["verdict"], r["exit_code"], r["stdout"]

    with Client(path) as c:                           # a long-lived child, framed stdio
        s = c.open_session(["python3", "server.py"], framing="newline")
        s.write('{"ping": 1}')
        for message in s:                              # bytes, one per framed message
            ...
        s.close(); s.wait()                            # the session.ended params

One background thread reads the socket and routes replies and notifications by call id
(sessions: by session id), so calls may overlap (e.g. cancel() from another thread while
exec() waits).
"""

from __future__ import annotations

import itertools
import json
import queue
import socket
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from .protocol import (INTERNAL_ERROR, SESSION_NOTIFICATIONS, ConnectionLost, CorralError, Json,  # noqa: F401
                       attach_params, chunk_bytes, exec_params, lost_session_end, result_of, session_params,
                       write_params)
from .protocol import *  # noqa: F401,F403  (the error codes, for `from corral.client import *`)
from .workspace import Workspace

BytesCallback = Optional[Callable[[bytes], None]]
EventCallback = Optional[Callable[[Json], None]]


class _Call:
    def __init__(self, on_stdout=None, on_stderr=None, on_network=None):
        self.done = threading.Event()
        self.reply = None
        self.on_stdout = on_stdout
        self.on_stderr = on_stderr
        self.on_network = on_network
        self.execution_id = None
        self.session = None  # session.open: the Session to register with the reply


class Session:
    """An open session (stdio or terminal) of this connection.

    Output arrives as bytes: to on_output(bytes) when given, else through iteration
    (`for chunk in session`, which ends with the session; stdio: one chunk per framed
    message). wait() returns the session.ended params. A stdio session opened with
    forward_stderr sends the child's stderr as it comes: to on_stderr(bytes) when given,
    else appended to `stderr`. In allowlist network mode each connection through the
    session's egress proxy, as it ends, goes to on_network(event dict) when given and is
    appended to `network`; messages the session refused to frame are kept in `refused`.
    A terminal in a workspace belongs to the workspace: `terminal` is its id there,
    `writer` whether this client may type (False after another took over), and detach()
    leaves it running."""

    def __init__(self, client: "Client", kind: str, on_output: BytesCallback = None, on_ended: EventCallback = None,
                 on_stderr: BytesCallback = None, on_network: EventCallback = None) -> None:
        self._client = client
        self.kind = kind
        self.id = None
        self.on_output = on_output
        self.on_ended = on_ended
        self.on_stderr = on_stderr
        self.on_network = on_network
        self.stderr = bytearray()
        self.network = []
        self.refused = []
        self.ended = None
        self.terminal = None   # a workspace's terminal: its id there
        self.workspace = None
        self.writer = True
        self.detached = False
        self._done = threading.Event()
        self._queue = queue.Queue()

    def write(self, data: Union[str, bytes]) -> Json:
        """Sends one message (stdio) or input bytes (terminal); str or bytes."""
        return self._client.call("session.write", write_params(self.id, data))

    def resize(self, rows: int, cols: int) -> Json:
        return self._client.call("session.resize", {"session": self.id, "rows": rows, "cols": cols})

    def close(self) -> Json:
        """Stdio: EOF on stdin, then the child's grace; terminal: cancelled."""
        return self._client.call("session.close", {"session": self.id})

    def detach(self) -> Json:
        """A workspace's terminal only: stop hearing it; it goes on in the workspace
        (Workspace.attach finds it again). Iteration ends; wait() returns None."""
        reply = self._client.call("session.detach", {"session": self.id})
        self._client._forget_session(self.id)
        self.detached = True
        self._queue.put(None)
        self._done.set()
        return reply

    def wait(self, timeout: Optional[float] = None) -> Json:
        if not self._done.wait(timeout):
            raise TimeoutError("session %s did not end within %s s" % (self.id, timeout))
        return self.ended

    def read(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next chunk of output, or None once the session has ended."""
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no output from session %s within %s s" % (self.id, timeout))
        if item is None:
            self._queue.put(None)  # later reads see the end too
        return item

    def __iter__(self):
        while True:
            item = self.read()
            if item is None:
                return
            yield item

    def _output(self, data):
        if self.on_output:
            self.on_output(data)
        else:
            self._queue.put(data)

    def _stderr(self, data):
        if self.on_stderr:
            self.on_stderr(data)
        else:
            self.stderr += data

    def _network(self, event):
        self.network.append(event)
        if self.on_network:
            self.on_network(event)

    def _opened(self, result):
        self.id = result.get("session")
        self.terminal = result.get("terminal")
        self.workspace = result.get("workspace")
        self.writer = result.get("writer", True)

    def _end(self, params):
        self.ended = params
        self._queue.put(None)
        self._done.set()
        if self.on_ended:
            self.on_ended(params)


class Execution:
    """A running exec: wait() for its result, or cancel() it."""

    def __init__(self, client, call_id, call):
        self._client = client
        self.id = call_id
        self._call = call

    @property
    def execution_id(self) -> Optional[str]:
        return self._call.execution_id

    def wait(self, timeout: Optional[float] = None) -> Json:
        return self._client._wait(self._call, timeout)

    def cancel(self) -> Json:
        return self._client.cancel(self.id)


class Client:
    def __init__(self, socket_path: str, connect_timeout: float = 10.0) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(connect_timeout)
        self._sock.connect(socket_path)
        self._sock.settimeout(None)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._calls = {}
        self._sessions = {}
        self._lost = None
        self.connection_error = None
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # -- life cycle -------------------------------------------------------------------
    def close(self):
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self._reader.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- methods ----------------------------------------------------------------------
    def exec(self, argv: Optional[Sequence[str]] = None, language: Optional[str] = None, code: Optional[str] = None,
             stdin: Union[str, bytes, None] = None, timeout: Optional[float] = None,
             on_stdout: BytesCallback = None, on_stderr: BytesCallback = None,
             wait_timeout: Optional[float] = None, on_network: EventCallback = None, **limits: Any) -> Json:
        """Runs one program and returns its result (a dict, see PROTOCOL.md).

        stdin may be str or bytes; on_stdout/on_stderr receive bytes as they arrive;
        on_network receives each egress connection's event (a dict) as it ends (allowlist
        network mode; the whole audit is also the result's `network`). Extra keyword
        arguments (memory_limit, output_cap, pids_limit, cpu_cores, env, tier,
        network_allow) pass through as exec params."""
        return self.exec_async(argv=argv, language=language, code=code, stdin=stdin, timeout=timeout,
                               on_stdout=on_stdout, on_stderr=on_stderr, on_network=on_network,
                               **limits).wait(wait_timeout)

    def exec_async(self, argv: Optional[Sequence[str]] = None, language: Optional[str] = None,
                   code: Optional[str] = None, stdin: Union[str, bytes, None] = None,
                   timeout: Optional[float] = None, on_stdout: BytesCallback = None,
                   on_stderr: BytesCallback = None, on_network: EventCallback = None,
                   **limits: Any) -> "Execution":
        """Starts an exec and returns its Execution at once (wait() for the result)."""
        params = exec_params(argv, language, code, stdin, timeout, bool(on_stdout or on_stderr or on_network),
                             limits)
        call = _Call(on_stdout, on_stderr, on_network)
        call_id = self._send("exec", params, call)
        return Execution(self, call_id, call)

    def open_session(self, argv: Optional[Sequence[str]] = None, kind: str = "stdio",
                     on_output: BytesCallback = None, on_ended: EventCallback = None,
                     timeout: Optional[float] = None, on_stderr: BytesCallback = None,
                     on_network: EventCallback = None, **params: Any) -> Session:
        """Opens a session and returns its Session. kind: "stdio" or "terminal". Keyword
        arguments pass through as session.open params (env, tier, framing, rows, cols,
        echo, idle_timeout, lifetime, memory, pids, cpu, forward_stderr, network_allow);
        on_stderr implies forward_stderr=True."""
        params = session_params(argv, kind, on_stderr is not None, params)
        return self._open_session("session.open", params, Session(self, kind, on_output, on_ended, on_stderr, on_network),
                                  timeout)

    def attach_terminal(self, workspace: str, terminal: Optional[str] = None, writer: bool = True,
                        take_over: bool = False, on_output: BytesCallback = None, on_ended: EventCallback = None,
                        timeout: Optional[float] = None) -> Session:
        """Attaches to a terminal a workspace keeps (the latest when none is named): its
        scrollback comes first as output, then the terminal live. writer=False watches
        only; a writer attached elsewhere refuses another unless take_over."""
        return self._open_session("workspace.attach", attach_params(workspace, terminal, writer, take_over),
                                  Session(self, "terminal", on_output, on_ended), timeout)

    def _open_session(self, method: str, params: Json, session: Session, timeout: Optional[float]) -> Session:
        call = _Call()
        call.session = session
        self._send(method, params, call)
        self._wait(call, timeout)
        return session

    def _forget_session(self, session_id):
        with self._lock:
            self._sessions.pop(session_id, None)

    def create_workspace(self, name: Optional[str] = None, keep: bool = False, **options: Any) -> Workspace:
        """Makes a workspace (see corral.workspace). Options narrow the daemon's settings:
        idle_timeout, lifetime (seconds), memory_limit, pids_limit, cpu_cores, keep_files,
        from_snapshot (a snapshot id: the files start as it holds them).
        keep=True: leaving a `with` block does not end it."""
        if name is not None:
            options["name"] = name
        return Workspace(self, self.call("workspace.create", options), keep=keep)

    def workspace(self, ref: str) -> Workspace:
        """One of this uid's workspaces, by id or name (kept when a `with` block ends)."""
        return Workspace(self, self.call("workspace.inspect", {"workspace": ref}), keep=True)

    def list_workspaces(self) -> List[Json]:
        return self.call("workspace.list")["workspaces"]

    def list_snapshots(self) -> List[Json]:
        return self.call("snapshot.list")["snapshots"]

    def remove_snapshot(self, snapshot: str) -> Json:
        return self.call("snapshot.remove", {"snapshot": snapshot})

    def cancel(self, call_id: int) -> Json:
        """Cancels this connection's call `call_id` (an exec)."""
        return self.call("cancel", {"id": call_id})

    def capabilities(self) -> Json:
        """What this machine can enforce (as `corral doctor --json`)."""
        return self.call("capabilities")

    def describe(self) -> Json:
        """The daemon's frozen profile descriptor and its digest."""
        return self.call("describe")

    def health(self) -> Json:
        """Liveness and load: status, executions running and queued."""
        return self.call("health")

    def call(self, method: str, params: Optional[Json] = None, timeout: Optional[float] = None) -> Any:
        """Any method by name; its result, or CorralError."""
        call = _Call()
        self._send(method, params or {}, call)
        return self._wait(call, timeout)

    def send_raw(self, line: bytes) -> None:
        """Sends bytes as they are (tests of malformed input)."""
        self._sock.sendall(line)

    # -- plumbing ---------------------------------------------------------------------
    def _send(self, method, params, call):
        with self._lock:
            if self._lost:
                raise ConnectionLost(self._lost)
            call_id = next(self._ids)
            self._calls[call_id] = call
        line = json.dumps({"jsonrpc": "2.0", "id": call_id, "method": method, "params": params})
        self._sock.sendall(line.encode("utf-8") + b"\n")
        return call_id

    def _wait(self, call, timeout):
        if not call.done.wait(timeout):
            raise TimeoutError("no answer from the corral daemon within %s s" % timeout)
        return result_of(call.reply)

    def _read_loop(self):
        buf = b""
        why = "the daemon closed the connection"
        try:
            while True:
                data = self._sock.recv(65536)
                if not data:
                    break
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        self._dispatch(json.loads(line))
        except (OSError, ValueError) as e:
            why = str(e)
        if self.connection_error:
            why = self.connection_error.get("message", why)
        with self._lock:
            self._lost = why
            calls, self._calls = self._calls, {}
            sessions, self._sessions = self._sessions, {}
        for call in calls.values():
            call.reply = {"error": {"code": INTERNAL_ERROR, "message": "connection lost: " + why}}
            call.done.set()
        for session in sessions.values():
            session._end(lost_session_end(session.id))

    def _dispatch(self, msg):
        method = msg.get("method")
        if method in SESSION_NOTIFICATIONS:
            params = msg.get("params", {})
            with self._lock:
                session = self._sessions.get(params.get("session"))
                if method == "session.ended":
                    self._sessions.pop(params.get("session"), None)
            if session is None:
                return
            if method == "session.output":
                session._output(chunk_bytes(params))
            elif method == "session.stderr":
                session._stderr(chunk_bytes(params))
            elif method == "session.network":
                session._network(params.get("event"))
            elif method == "session.refused":
                session.refused.append(params)
            elif method == "session.writer_lost":
                session.writer = False
            elif method == "session.ended":
                session._end(params)
            return
        if "method" in msg:
            params = msg.get("params", {})
            with self._lock:
                call = self._calls.get(params.get("id"))
            if call is None:
                return
            if msg["method"] == "exec.started":
                call.execution_id = params.get("execution_id")
            elif msg["method"] == "exec.output":
                fn = call.on_stdout if params.get("stream") == "stdout" else call.on_stderr
                if fn:
                    fn(chunk_bytes(params))
            elif msg["method"] == "exec.network" and call.on_network:
                call.on_network(params.get("event"))
            return
        call_id = msg.get("id")
        with self._lock:
            call = self._calls.pop(call_id, None)
        if call is None and call_id is None and "error" in msg:
            # About the connection itself (refused, a line too long): kept as the reason
            # if the daemon then hangs up.
            self.connection_error = msg["error"]
            return
        if call is not None:
            if call.session is not None and "result" in msg:
                # Registered before any of its notifications is read (they follow the reply).
                call.session._opened(msg["result"])
                with self._lock:
                    self._sessions[call.session.id] = call.session
            call.reply = msg
            call.done.set()
