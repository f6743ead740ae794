"""A client for the corral daemon (proto/PROTOCOL.md), standard library only.

    from corral_client import Client
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

import base64
import itertools
import json
import queue
import socket
import threading

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


class CorralError(Exception):
    """The daemon answered with an error (see PROTOCOL.md for the codes)."""

    def __init__(self, code, message, data=None):
        super().__init__("%s (%d)" % (message, code))
        self.code = code
        self.message = message
        self.data = data


class ConnectionLost(CorralError):
    def __init__(self, why):
        super().__init__(INTERNAL_ERROR, "connection to the corral daemon lost: %s" % why)


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
    appended to `network`; messages the session refused to frame are kept in `refused`."""

    def __init__(self, client, kind, on_output=None, on_ended=None, on_stderr=None, on_network=None):
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
        self._done = threading.Event()
        self._queue = queue.Queue()

    def write(self, data):
        """Sends one message (stdio) or input bytes (terminal); str or bytes."""
        params = {"session": self.id}
        if isinstance(data, bytes):
            try:
                params["data"] = data.decode("utf-8")
            except UnicodeDecodeError:
                params["data_base64"] = base64.b64encode(data).decode("ascii")
        else:
            params["data"] = data
        return self._client.call("session.write", params)

    def resize(self, rows, cols):
        return self._client.call("session.resize", {"session": self.id, "rows": rows, "cols": cols})

    def close(self):
        """Stdio: EOF on stdin, then the child's grace; terminal: cancelled."""
        return self._client.call("session.close", {"session": self.id})

    def wait(self, timeout=None):
        if not self._done.wait(timeout):
            raise TimeoutError("session %s did not end within %s s" % (self.id, timeout))
        return self.ended

    def read(self, timeout=None):
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
    def execution_id(self):
        return self._call.execution_id

    def wait(self, timeout=None):
        return self._client._wait(self._call, timeout)

    def cancel(self):
        return self._client.cancel(self.id)


def _chunk_bytes(params):
    if "data_base64" in params:
        return base64.b64decode(params["data_base64"])
    return params.get("data", "").encode("utf-8")


class Client:
    def __init__(self, socket_path, connect_timeout=10.0):
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
    def exec(self, argv=None, language=None, code=None, stdin=None, timeout=None,
             on_stdout=None, on_stderr=None, wait_timeout=None, on_network=None, **limits):
        """Runs one program and returns its result (a dict, see PROTOCOL.md).

        stdin may be str or bytes; on_stdout/on_stderr receive bytes as they arrive;
        on_network receives each egress connection's event (a dict) as it ends (allowlist
        network mode; the whole audit is also the result's `network`). Extra keyword
        arguments (memory_limit, output_cap, pids_limit, cpu_cores, env, tier,
        network_allow) pass through as exec params."""
        return self.exec_async(argv=argv, language=language, code=code, stdin=stdin, timeout=timeout,
                               on_stdout=on_stdout, on_stderr=on_stderr, on_network=on_network,
                               **limits).wait(wait_timeout)

    def exec_async(self, argv=None, language=None, code=None, stdin=None, timeout=None,
                   on_stdout=None, on_stderr=None, on_network=None, **limits):
        params = dict(limits)
        if argv is not None:
            params["argv"] = list(argv)
        if language is not None:
            params["language"] = language
        if code is not None:
            params["code"] = code
        if stdin is not None:
            if isinstance(stdin, bytes):
                try:
                    params["stdin"] = stdin.decode("utf-8")
                except UnicodeDecodeError:
                    params["stdin_base64"] = base64.b64encode(stdin).decode("ascii")
            else:
                params["stdin"] = stdin
        if timeout is not None:
            params["timeout"] = timeout
        params["stream"] = bool(on_stdout or on_stderr or on_network)
        call = _Call(on_stdout, on_stderr, on_network)
        call_id = self._send("exec", params, call)
        return Execution(self, call_id, call)

    def open_session(self, argv=None, kind="stdio", on_output=None, on_ended=None, timeout=None,
                     on_stderr=None, on_network=None, **params):
        """Opens a session and returns its Session. kind: "stdio" or "terminal". Keyword
        arguments pass through as session.open params (env, tier, framing, rows, cols,
        echo, idle_timeout, lifetime, memory, pids, cpu, forward_stderr, network_allow);
        on_stderr implies forward_stderr=True."""
        params = dict(params, kind=kind)
        if argv is not None:
            params["argv"] = list(argv)
        if on_stderr is not None:
            params["forward_stderr"] = True
        call = _Call()
        call.session = Session(self, kind, on_output, on_ended, on_stderr, on_network)
        self._send("session.open", params, call)
        self._wait(call, timeout)
        return call.session

    def cancel(self, call_id):
        return self.call("cancel", {"id": call_id})

    def capabilities(self):
        return self.call("capabilities")

    def describe(self):
        return self.call("describe")

    def health(self):
        return self.call("health")

    def call(self, method, params=None, timeout=None):
        call = _Call()
        self._send(method, params or {}, call)
        return self._wait(call, timeout)

    def send_raw(self, line):
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
        reply = call.reply
        if "error" in reply:
            e = reply["error"]
            raise CorralError(e.get("code", INTERNAL_ERROR), e.get("message", ""), e.get("data"))
        return reply["result"]

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
            session._end({"session": session.id, "reason": "connection_lost", "exit_code": None,
                          "signal": None, "stderr_tail": ""})

    def _dispatch(self, msg):
        method = msg.get("method")
        if method in ("session.output", "session.stderr", "session.ended", "session.refused",
                      "session.network"):
            params = msg.get("params", {})
            with self._lock:
                session = self._sessions.get(params.get("session"))
                if method == "session.ended":
                    self._sessions.pop(params.get("session"), None)
            if session is None:
                return
            if method == "session.output":
                session._output(_chunk_bytes(params))
            elif method == "session.stderr":
                session._stderr(_chunk_bytes(params))
            elif method == "session.network":
                session._network(params.get("event"))
            elif method == "session.refused":
                session.refused.append(params)
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
                    fn(_chunk_bytes(params))
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
                call.session.id = msg["result"].get("session")
                with self._lock:
                    self._sessions[call.session.id] = call.session
            call.reply = msg
            call.done.set()
