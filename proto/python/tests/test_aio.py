"""Tests of the corral package's AsyncClient against a real `corral serve`
(tests/daemon_fixture.py)."""

import asyncio
import unittest

from daemon_fixture import PROBLEM, Daemon, wait_until  # noqa: E402

import corral  # noqa: E402
from corral import AsyncClient, CorralError  # noqa: E402
from test_client import processes_with_arg  # noqa: E402


@unittest.skipIf(PROBLEM, PROBLEM or "")
class AsyncDaemonTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon("corral-py-aio-")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    async def client(self):
        c = await AsyncClient.connect(self.daemon.sock)
        self.addAsyncCleanup(c.close)
        return c

    async def test_exec_streams_through_callbacks_plain_and_async(self):
        c = await self.client()
        out, err = [], []

        async def on_err(b):
            err.append(b)

        r = await c.exec(argv=["/bin/sh", "-c", "echo one; echo two >&2; exit 3"], on_stdout=out.append,
                         on_stderr=on_err, wait_timeout=30)
        self.assertEqual((r["verdict"], r["exit_code"]), ("exited", 3))
        self.assertEqual(b"".join(out), b"one\n")
        self.assertEqual(b"".join(err), b"two\n")

    async def test_exec_events_yields_events_in_order_then_the_result(self):
        c = await self.client()
        kinds, stdout = [], b""
        async for kind, value in c.exec_events(argv=["/bin/sh", "-c", "printf 'a\\377'; echo b >&2"]):
            kinds.append(kind)
            if kind == "stdout":
                stdout += value
            if kind == "result":
                result = value
        self.assertEqual(kinds[0], "started")
        self.assertEqual(kinds[-1], "result")
        self.assertIn("stderr", kinds)
        self.assertEqual(stdout, b"a\xff")  # not UTF-8: arrives exactly
        self.assertEqual(result["exit_code"], 0)

    async def test_errors_are_raised_and_the_connection_stays_good(self):
        c = await self.client()
        with self.assertRaises(CorralError) as e:
            await c.call("exec", {"argv": "ls"})
        self.assertEqual(e.exception.code, corral.INVALID_PARAMS)
        with self.assertRaises(CorralError) as e:
            await c.exec(argv=["true"], tier="host")
        self.assertEqual(e.exception.code, corral.REFUSED)
        self.assertEqual((await c.health())["status"], "ok")
        self.assertIn("tiers", await c.capabilities())
        self.assertTrue((await c.describe())["digest"].startswith("sha256:"))

    async def test_calls_overlap_and_cancel_ends_a_running_exec(self):
        c = await self.client()
        marker = "9.75"
        running = await c.exec_async(argv=["sleep", marker])
        self.assertTrue(await asyncio.get_running_loop().run_in_executor(
            None, lambda: wait_until(lambda: processes_with_arg(marker))))
        # Other calls are answered while it runs.
        echoed = await asyncio.gather(*(c.exec(argv=["/bin/echo", str(i)]) for i in range(4)))
        self.assertEqual(sorted(r["stdout"] for r in echoed), ["0\n", "1\n", "2\n", "3\n"])
        await running.cancel()
        r = await running.wait(30)
        self.assertEqual(r["verdict"], "cancelled")
        self.assertFalse(processes_with_arg(marker))

    async def test_stdio_session_round_trip(self):
        c = await self.client()
        server = ("import sys\n"
                  "for line in sys.stdin:\n"
                  "    sys.stdout.write('got ' + line); sys.stdout.flush()\n")
        s = await c.open_session(["python3", "-c", server], tier="landlock")
        self.assertEqual(await s.write("one"), {"written": True})
        await s.write(b"two")
        self.assertEqual(await s.read(10), b"got one")
        self.assertEqual(await s.read(10), b"got two")
        await s.close()
        self.assertEqual([m async for m in s], [])
        self.assertEqual((await s.wait(10))["exit_code"], 0)

    async def test_terminal_session_echoes_and_resizes(self):
        c = await self.client()
        s = await c.open_session(["/bin/sh"], kind="terminal", rows=24, cols=80)
        await s.resize(40, 120)
        await s.write("stty size; exit\n")
        seen = b""
        async for chunk in s:
            seen += chunk
        self.assertIn(b"40 120", seen)
        self.assertIsNotNone((await s.wait(10))["reason"])

    async def test_a_lost_connection_fails_the_calls_in_flight(self):
        c = await AsyncClient.connect(self.daemon.sock)
        pending = await c.exec_async(argv=["sleep", "9.5"])
        c._writer.transport.abort()  # the connection breaks under the call
        with self.assertRaises(CorralError):
            await pending.wait(10)
        with self.assertRaises(corral.ConnectionLost):
            await c.health()
        await c.close()
        self.assertTrue(await asyncio.get_running_loop().run_in_executor(
            None, lambda: wait_until(lambda: not processes_with_arg("9.5"), 10)))


if __name__ == "__main__":
    unittest.main()
