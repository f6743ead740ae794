"""Tests of the corral package's sync Client against a real `corral serve` (landlock tier, a
temp socket): tests/daemon_fixture.py starts it, or says why it cannot."""

import http.server
import os
import threading
import unittest

from daemon_fixture import PROBLEM, Daemon, wait_until  # noqa: E402

import corral  # noqa: E402
from corral import Client, CorralError  # noqa: E402


def processes_with_arg(marker):
    """Pids whose command line contains `marker` (seen from outside the sandbox)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args:
            found.append(int(pid))
    return found


@unittest.skipIf(PROBLEM, PROBLEM or "")
class DaemonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon()
        cls.sock = cls.daemon.sock

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def client(self):
        c = Client(self.sock)
        self.addCleanup(c.close)
        return c

    def test_exec_streams_then_returns_the_result(self):
        out, err = [], []
        r = self.client().exec(argv=["/bin/sh", "-c", "echo one; echo two >&2; exit 3"],
                               on_stdout=out.append, on_stderr=err.append)
        self.assertEqual(r["verdict"], "exited")
        self.assertEqual(r["exit_code"], 3)
        self.assertEqual(r["tier"], "landlock")
        self.assertEqual(b"".join(out), b"one\n")
        self.assertEqual(b"".join(err), b"two\n")
        self.assertEqual(r["stdout"], "one\n")

    def test_stdin_and_command_language(self):
        r = self.client().exec(language="command", code="tr a-z A-Z", stdin="shout\n")
        self.assertEqual(r["stdout"], "SHOUT\n")

    def test_binary_output_arrives_exactly(self):
        got = []
        r = self.client().exec(argv=["/usr/bin/printf", "\\377\\000ok"], on_stdout=got.append)
        self.assertEqual(b"".join(got), b"\xff\x00ok")
        self.assertIn("stdout_base64", r)

    def test_timeout_is_a_result(self):
        r = self.client().exec(argv=["sleep", "5"], timeout=0.3)
        self.assertEqual(r["verdict"], "timed_out")

    def test_wrong_types_and_unknown_methods_are_errors(self):
        c = self.client()
        with self.assertRaises(CorralError) as e:
            c.call("exec", {"argv": "ls"})
        self.assertEqual(e.exception.code, corral.INVALID_PARAMS)
        with self.assertRaises(CorralError) as e:
            c.call("no.such.method")
        self.assertEqual(e.exception.code, corral.METHOD_NOT_FOUND)
        with self.assertRaises(CorralError) as e:
            c.exec(argv=["true"], tier="host")
        self.assertEqual(e.exception.code, corral.REFUSED)
        self.assertEqual(c.health()["status"], "ok")  # the connection is still good

    def test_malformed_json_does_not_hurt_the_daemon(self):
        c = self.client()
        c.send_raw(b"{not json\n[1,2]\n" + b"[" * 100000 + b"\n")
        self.assertEqual(c.health()["status"], "ok")

    def test_capabilities_describe_health(self):
        c = self.client()
        self.assertIn("tiers", c.capabilities())
        self.assertTrue(c.describe()["digest"].startswith("sha256:"))
        h = c.health()
        self.assertEqual(h["status"], "ok")
        self.assertIn("running", h["executions"])

    def open_or_skip(self, c, *args, **kwargs):
        try:
            return c.open_session(*args, **kwargs)
        except CorralError as e:
            if e.code == corral.METHOD_NOT_FOUND:
                self.skipTest("%s serves no sessions (an older build; set CORRAL_BIN)" % BIN)
            raise

    def test_stdio_session_round_trip(self):
        c = self.client()
        server = ("import sys\n"
                  "for line in sys.stdin:\n"
                  "    sys.stdout.write('got ' + line); sys.stdout.flush()\n")
        s = self.open_or_skip(c, ["python3", "-c", server], tier="landlock")
        self.assertTrue(s.id)
        self.assertEqual(s.write("one"), {"written": True})
        s.write(b"two")
        self.assertEqual(s.read(10), b"got one")
        self.assertEqual(s.read(10), b"got two")
        with self.assertRaises(CorralError) as e:
            s.write("a\nb")  # a newline inside a newline-framed message
        self.assertEqual(e.exception.code, corral.INVALID_PARAMS)
        s.close()
        self.assertEqual(list(s), [])
        ended = s.wait(10)
        self.assertEqual(ended["exit_code"], 0)
        with self.assertRaises(CorralError) as e:
            s.write("late")
        self.assertEqual(e.exception.code, corral.INVALID_PARAMS)

    def test_forwarded_stderr_arrives_while_the_session_runs(self):
        c = self.client()
        chunks = []
        got = threading.Event()

        def on_stderr(data):
            chunks.append(data)
            if b"log-one" in b"".join(chunks):
                got.set()

        server = "printf 'log-one\\n\\377\\n' >&2; read x; echo \"got:$x\""
        s = self.open_or_skip(c, ["/bin/sh", "-c", server], on_stderr=on_stderr)
        # Before the child has read anything, its stderr is here: live, not the tail at the end.
        self.assertTrue(got.wait(10), "no session.stderr before the first write")
        s.write("ping")
        self.assertEqual(s.read(10), b"got:ping")
        ended = s.wait(10)
        self.assertEqual(ended["exit_code"], 0)
        self.assertEqual(b"".join(chunks), b"log-one\n\xff\n")  # exact bytes, via data_base64
        quiet = self.open_or_skip(c, ["/bin/sh", "-c", "echo kept >&2"])
        quiet.wait(10)
        self.assertEqual(bytes(quiet.stderr), b"")  # without forward_stderr: only the tail
        self.assertIn("kept", quiet.ended["stderr_tail"])

    def test_sessions_are_per_connection_and_end_with_it(self):
        marker = "30.5353"
        a = Client(self.sock)
        b = self.client()
        s = self.open_or_skip(a, ["sleep", marker])
        self.assertTrue(wait_until(lambda: processes_with_arg(marker)), "the session's child never started")
        with self.assertRaises(CorralError) as e:
            b.call("session.close", {"session": s.id})
        self.assertEqual(e.exception.code, corral.INVALID_PARAMS)
        self.assertTrue(processes_with_arg(marker))
        a.close()
        self.assertTrue(wait_until(lambda: not processes_with_arg(marker), 10), "the child outlived its client")

    def test_terminal_session_resize(self):
        c = self.client()
        got = []
        seen = threading.Event()

        ready = threading.Event()

        def on_output(data):
            got.append(data)
            if b"42x" in b"".join(got):
                ready.set()
            if b"41 97" in b"".join(got):
                seen.set()

        s = self.open_or_skip(c, kind="terminal", rows=24, cols=80, on_output=on_output)
        s.write("echo $((6*7))x\n")  # the shell runs before the resize
        self.assertTrue(ready.wait(10), b"".join(got))
        s.resize(41, 97)
        s.write("stty size\n")
        self.assertTrue(seen.wait(10), b"".join(got))
        s.close()
        self.assertEqual(s.wait(10)["reason"], "cancelled")

    def test_cancel_ends_a_running_exec(self):
        c = self.client()
        started = threading.Event()
        run = c.exec_async(argv=["/bin/sh", "-c", "echo go; exec sleep 30"],
                           on_stdout=lambda b: started.set())
        self.assertTrue(started.wait(10))
        self.assertEqual(run.cancel(), {"cancelled": True})
        r = run.wait(10)
        self.assertEqual(r["verdict"], "cancelled")
        self.assertEqual(r["stdout"], "go\n")

    def test_one_client_cannot_cancel_another(self):
        a, b = self.client(), self.client()
        run = a.exec_async(argv=["sleep", "1"])
        with self.assertRaises(CorralError) as e:
            b.cancel(run.id)
        self.assertEqual(e.exception.code, corral.INVALID_PARAMS)
        self.assertEqual(run.wait(10)["verdict"], "exited")

    def test_disconnect_cancels_and_cleans_up(self):
        marker = "30.4242"
        c = Client(self.sock)
        c.exec_async(argv=["sleep", marker])
        self.assertTrue(wait_until(lambda: processes_with_arg(marker)), "the sleep never started")
        c.close()
        self.assertTrue(wait_until(lambda: not processes_with_arg(marker), 5), "the sleep outlived its client")

    def test_concurrent_clients(self):
        results = []

        def one(i):
            with Client(self.sock) as c:
                results.append(c.exec(argv=["/bin/echo", str(i)])["stdout"])

        threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertEqual(sorted(results), sorted("%d\n" % i for i in range(8)))


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello through the proxy\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


# Inside the jail: a GET to the host server through the proxy the environment names. corral's
# no_proxy lists 127.0.0.1 (the jail's own loopback), and urllib honours it even for an
# explicit handler: dropped, so the host server's address goes through the proxy.
FETCH = ("import os, sys, urllib.request\n"
         "os.environ.pop('no_proxy', None); os.environ.pop('NO_PROXY', None)\n"
         "proxy = urllib.request.ProxyHandler({'http': os.environ['http_proxy']})\n"
         "for url in sys.argv[1:]:\n"
         "    try:\n"
         "        print(urllib.request.build_opener(proxy).open(url, timeout=10).read().decode(), end='')\n"
         "    except Exception as e:\n"
         "        print('refused', getattr(e, 'code', type(e).__name__))\n")


@unittest.skipIf(PROBLEM, PROBLEM or "")
class AllowlistDaemonTest(unittest.TestCase):
    """A daemon whose profile is an allow-list naming one host server on 127.0.0.1: the
    client sees each connection as it ends, for executions and sessions."""

    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
        cls.port = cls.server.server_address[1]
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.daemon = Daemon("corral-py-net-", '[sandbox.network]\nmode = "allowlist"\nallow = ["127.0.0.1/32:%d"]\n'
                            % cls.port)
        cls.sock = cls.daemon.sock

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.server.shutdown()

    def url(self, port=None):
        return "http://127.0.0.1:%d/" % (port or self.port)

    def test_exec_reports_each_connection_as_it_ends(self):
        events = []
        with Client(self.sock) as c:
            r = c.exec(argv=["python3", "-c", FETCH, self.url(), self.url(self.port + 1)],
                       on_network=events.append)
        self.assertEqual(r["exit_code"], 0, r)
        self.assertEqual(r["stdout"], "hello through the proxy\nrefused 403\n")
        decisions = sorted(e["decision"] for e in events)
        self.assertEqual(decisions, ["allowed", "not_allowed"])
        self.assertEqual(sorted(e["decision"] for e in r["network"]), decisions)

    def test_session_network_events_reach_the_session(self):
        with Client(self.sock) as c:
            seen = threading.Event()
            s = c.open_session(["python3", "-c", FETCH, self.url()], on_network=lambda e: seen.set())
            ended = s.wait(30)
            self.assertTrue(seen.is_set())
            self.assertEqual([e["decision"] for e in s.network], ["allowed"])
            self.assertEqual(s.network[0]["port"], self.port)
            self.assertEqual([e["decision"] for e in ended["network"]], ["allowed"])


if __name__ == "__main__":
    unittest.main()
