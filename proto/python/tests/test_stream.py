"""exec_stream: an execution's live output read by iterating (Client) and `async for`
(AsyncClient), against a real `corral serve` (tests/daemon_fixture.py)."""

import os
import time
import unittest

from daemon_fixture import PROBLEM, Daemon, wait_until  # noqa: E402

import corral  # noqa: E402
from corral import AsyncClient, Client, CorralError  # noqa: E402
from test_client import processes_with_arg  # noqa: E402


def alive(pid):
    """Whether pid is a process that has not ended (a zombie has ended)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@unittest.skipIf(PROBLEM, PROBLEM or "")
class ExecStreamTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon("corral-py-stream-")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def client(self):
        c = Client(self.daemon.sock)
        self.addCleanup(c.close)
        return c

    def test_pieces_come_while_the_program_runs_and_join_to_the_result(self):
        c = self.client()
        # The program sleeps 1 s between its pieces: the first must arrive while it runs.
        script = "printf 'a\\377'; echo err >&2; sleep 1; echo b"
        pieces = []
        with c.exec_stream(argv=["/bin/sh", "-c", script], timeout=30) as run:
            first = run.read(timeout=20)
            self.assertIsNotNone(first)
            self.assertFalse(run.done, "the first piece came only after the end")
            pieces.append(first)
            for piece in run:
                pieces.append(piece)
            self.assertTrue(run.done)
        out = b"".join(d for s, d in pieces if s == "stdout")
        err = b"".join(d for s, d in pieces if s == "stderr")
        self.assertEqual(out, b"a\xffb\n")
        self.assertEqual(err, b"err\n")
        self.assertEqual(run.result["verdict"], "exited")
        self.assertEqual(run.result["exit_code"], 0)
        self.assertIsNotNone(run.execution_id)
        self.assertIsNone(run.read(0), "a read after the end returns the end again")

    def test_leaving_the_block_early_cancels_the_execution(self):
        c = self.client()
        marker = "31.5151"
        started = time.monotonic()
        with c.exec_stream(argv=["/bin/sh", "-c", "echo go; exec sleep " + marker]) as run:
            for stream, data in run:
                self.assertEqual((stream, data), ("stdout", b"go\n"))
                self.assertTrue(wait_until(lambda: processes_with_arg(marker)), "the sleep never started")
                pids = processes_with_arg(marker)
                break
        # The with block waited for the end: the result is there, and it says why.
        self.assertTrue(run.done)
        self.assertEqual(run.result["verdict"], "cancelled")
        self.assertEqual(run.result["stdout"], "go\n")
        self.assertLess(time.monotonic() - started, 20)
        self.assertTrue(wait_until(lambda: not any(alive(p) for p in pids), 5), "the sleep outlived the block")

    def test_an_exception_in_the_block_cancels_and_is_the_one_raised(self):
        c = self.client()
        with self.assertRaises(KeyError):
            with c.exec_stream(argv=["/bin/sh", "-c", "echo go; exec sleep 30"]) as run:
                next(iter(run))
                raise KeyError("the consumer's own")
        self.assertEqual(run.result["verdict"], "cancelled")

    def test_a_read_with_a_bound_times_out_and_the_stream_goes_on(self):
        c = self.client()
        with c.exec_stream(argv=["/bin/sh", "-c", "sleep 1; echo late"]) as run:
            with self.assertRaises(TimeoutError):
                run.read(timeout=0.1)
            self.assertEqual(list(run), [("stdout", b"late\n")])
        self.assertEqual(run.result["exit_code"], 0)

    def test_a_request_corral_refuses_is_raised_from_the_iteration(self):
        c = self.client()
        run = c.exec_stream(argv=["true"], tier="no-such-tier")
        with self.assertRaises(CorralError) as e:
            list(run)
        self.assertNotEqual(e.exception.code, 0)
        with self.assertRaises(CorralError):
            run.wait(5)

    def test_cancel_after_the_end_says_it_had_ended(self):
        c = self.client()
        run = c.exec_stream(argv=["true"])
        self.assertEqual(list(run), [])
        self.assertEqual(run.cancel(5), {"cancelled": False})
        self.assertEqual(run.close(), run.result)

    def test_output_past_the_cap_is_dropped_and_the_result_says_so(self):
        c = self.client()
        with c.exec_stream(argv=["/bin/sh", "-c", "head -c 300000 /dev/zero"], output_cap=65536) as run:
            got = b"".join(d for s, d in run if s == "stdout")
        self.assertEqual(len(got), 65536)
        self.assertTrue(run.result["stdout_truncated"])

    def test_a_lost_connection_ends_the_stream_with_an_error(self):
        c = Client(self.daemon.sock)
        run = c.exec_stream(argv=["/bin/sh", "-c", "echo go; exec sleep 30"])
        self.assertEqual(run.read(timeout=20), ("stdout", b"go\n"))
        c.close()
        with self.assertRaises(CorralError) as e:
            run.read(timeout=10)
        self.assertIn("connection", str(e.exception))


@unittest.skipIf(PROBLEM, PROBLEM or "")
class AsyncExecStreamTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon("corral-py-astream-")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    async def client(self):
        c = await AsyncClient.connect(self.daemon.sock)
        self.addAsyncCleanup(c.close)
        return c

    async def test_async_for_yields_the_output_then_wait_gives_the_result(self):
        c = await self.client()
        async with c.exec_stream(argv=["/bin/sh", "-c", "printf 'a\\377'; echo b >&2; sleep 1; echo c"]) as run:
            first = await run.read(timeout=20)
            self.assertFalse(run.done, "the first piece came only after the end")
            pieces = [first] + [p async for p in run]
        out = b"".join(d for s, d in pieces if s == "stdout")
        self.assertEqual(out, b"a\xffc\n")
        self.assertIn(("stderr", b"b\n"), pieces)
        r = await run.wait(10)
        self.assertEqual((r["verdict"], r["exit_code"]), ("exited", 0))
        self.assertEqual(run.result, r)

    async def test_leaving_the_async_block_early_cancels(self):
        c = await self.client()
        marker = "32.6262"
        async with c.exec_stream(argv=["/bin/sh", "-c", "echo go; exec sleep " + marker]) as run:
            async for stream, data in run:
                self.assertEqual(data, b"go\n")
                self.assertTrue(wait_until(lambda: processes_with_arg(marker)), "the sleep never started")
                pids = processes_with_arg(marker)
                break
        self.assertTrue(run.done)
        self.assertEqual(run.result["verdict"], "cancelled")
        self.assertTrue(wait_until(lambda: not any(alive(p) for p in pids), 5), "the sleep outlived the block")

    async def test_await_sends_and_an_error_answer_is_raised(self):
        c = await self.client()
        run = await c.exec_stream(argv=["true"], tier="no-such-tier")
        with self.assertRaises(CorralError):
            async for _ in run:
                pass

    async def test_exec_events_still_yields_every_event(self):
        c = await self.client()
        kinds = [k async for k, _ in c.exec_events(argv=["/bin/echo", "x"])]
        self.assertEqual(kinds[0], "started")
        self.assertEqual(kinds[-1], "result")
        self.assertIn("stdout", kinds)


if __name__ == "__main__":
    unittest.main()
