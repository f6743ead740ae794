"""Workspaces through the sync Client against a real `corral serve` (landlock tier):
files that outlive each exec, the files API in pieces, changes with hashes, another
connection finding a workspace by name, and clear errors."""

import hashlib
import os
import unittest

from daemon_fixture import PROBLEM, Daemon  # noqa: E402

from corral import CONFLICT, NOT_FOUND, Client, CorralError  # noqa: E402
from corral.workspace import PIECE  # noqa: E402


@unittest.skipIf(PROBLEM, PROBLEM or "")
class WorkspaceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(prefix="corral-py-ws-")
        cls.sock = cls.daemon.sock

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def test_files_outlive_each_exec_and_changes_name_them(self):
        with Client(self.sock) as c, c.create_workspace(name="py-persist") as ws:
            r = ws.exec(["sh", "-c", "echo built > /work/out.txt && pwd"], timeout=30)
            self.assertEqual((r["verdict"], r["exit_code"], r["stdout"]), ("exited", 0, "/work\n"), r)
            self.assertEqual(r["workspace"], ws.id)
            # A second exec, a fresh process, reads what the first left.
            r = ws.exec(["cat", "/work/out.txt"], timeout=30)
            self.assertEqual(r["stdout"], "built\n", r)
            # In pieces: more than one call carries, with bytes that are not UTF-8.
            big = os.urandom(PIECE + 4097)
            entry = ws.write("blobs/big.bin", big, parents=True)
            self.assertEqual(entry["size"], len(big))
            self.assertEqual(entry["path"], "/work/blobs/big.bin")
            self.assertEqual(ws.read("/work/blobs/big.bin"), big)
            r = ws.exec(["sha256sum", "/work/blobs/big.bin"], timeout=30)
            self.assertTrue(r["stdout"].startswith(hashlib.sha256(big).hexdigest()), r)
            changes = {ch["path"]: ch for ch in ws.changes()}
            self.assertEqual(changes["/work/out.txt"]["change"], "added")
            self.assertEqual(changes["/work/blobs/big.bin"]["sha256"], hashlib.sha256(big).hexdigest())
            ws.mark("after-big")
            ws.remove("blobs", recursive=True)
            since = [(ch["change"], ch["path"]) for ch in ws.changes(since="after-big")]
            self.assertEqual(since, [("removed", "/work/blobs"), ("removed", "/work/blobs/big.bin")])
            names = [e["name"] for e in ws.list()]
            self.assertEqual(names, ["out.txt"])
            # An exec asked for its changes carries them in its result.
            r = ws.exec(["sh", "-c", "echo more >> out.txt; echo new > new.txt"], timeout=30, changes=True)
            self.assertEqual([(ch["change"], ch["path"]) for ch in r["changes"]],
                             [("added", "/work/new.txt"), ("modified", "/work/out.txt")], r)

    def test_another_connection_finds_it_by_name_until_it_ends(self):
        with Client(self.sock) as first:
            kept = first.create_workspace(name="py-kept", keep=True)
            kept.write("note", "left by the first connection\n")
        with Client(self.sock) as second:
            ws = second.workspace("py-kept")
            self.assertEqual(ws.id, kept.id)
            self.assertIn("py-kept", [w["name"] for w in second.list_workspaces()])
            self.assertEqual(ws.exec(["cat", "note"], timeout=30)["stdout"], "left by the first connection\n")
            ended = ws.end()
            self.assertTrue(ended["ended"])
            with self.assertRaises(CorralError) as e:
                second.workspace("py-kept")
            self.assertEqual(e.exception.code, NOT_FOUND)
            with self.assertRaises(CorralError) as e:
                second.exec(["true"], workspace=kept.id)
            self.assertEqual(e.exception.code, NOT_FOUND)

    def test_bad_requests_are_clear_errors_and_lose_nothing(self):
        with Client(self.sock) as c, c.create_workspace() as ws:
            ws.write("keep.txt", "still here\n")
            with self.assertRaises(CorralError) as e:
                c.call("workspace.files.read", {"workspace": ws.id, "path": "keep.txt", "offest": 1})
            self.assertIn("offest", e.exception.message)
            with self.assertRaises(CorralError) as e:
                ws.read("../../etc/passwd")
            self.assertIn("..", e.exception.message)
            with self.assertRaises(CorralError) as e:
                ws.read("missing.txt")
            self.assertEqual(e.exception.code, NOT_FOUND)
            with self.assertRaises(CorralError) as e:
                c.create_workspace(name="Bad Name!")
            self.assertIn("name", e.exception.message)
            self.assertEqual(ws.read("keep.txt"), b"still here\n")

    def test_a_server_left_running_answers_the_next_exec_and_is_listed_paused_and_killed(self):
        import subprocess
        import time
        from daemon_fixture import BIN
        fetch = ["python3", "-c", "import time, urllib.request\n"
                 "for _ in range(100):\n"
                 "    try:\n        print(urllib.request.urlopen('http://127.0.0.1:18766/').status); break\n"
                 "    except OSError:\n        time.sleep(0.05)\n"
                 "else:\n    print('no answer')"]
        with Client(self.sock) as c, c.create_workspace(name="py-server") as ws:
            r = ws.exec(["sh", "-c", "python3 -m http.server 18766 --bind 127.0.0.1 & echo up"], timeout=30,
                        leave_running=True)
            self.assertEqual((r["verdict"], r["stdout"]), ("exited", "up\n"), r)
            self.assertEqual(ws.exec(fetch, timeout=30)["stdout"], "200\n")
            servers = [p for p in ws.ps() if "http.server" in p["command"]]
            self.assertEqual(len(servers), 1, ws.ps())
            self.assertEqual(servers[0]["ppid"], 1)
            # The CLI lists the same process, by the same pid.
            cli = [BIN, "workspace"]
            listed = subprocess.run(cli + ["ps", "py-server", "--connect", self.sock], capture_output=True, text=True,
                                    timeout=60)
            self.assertEqual(listed.returncode, 0, listed.stderr)
            self.assertIn("http.server", listed.stdout)
            self.assertIn(str(servers[0]["pid"]), listed.stdout)
            # Paused: nothing new starts; resumed: the server answers again.
            self.assertEqual(ws.pause()["phase"], "paused")
            with self.assertRaises(CorralError) as refused:
                ws.exec(["true"], timeout=30)
            self.assertIn("paused", str(refused.exception))
            self.assertEqual(ws.resume()["phase"], "ready")
            self.assertEqual(ws.exec(fetch, timeout=30)["stdout"], "200\n")
            killed = subprocess.run(cli + ["kill", "py-server", str(servers[0]["pid"]), "-s", "KILL", "--connect",
                                           self.sock], capture_output=True, text=True, timeout=60)
            self.assertEqual(killed.returncode, 0, killed.stderr)
            # Waited for by pid: an exiting process has released its memory, and so its command
            # line, before it is a zombie, and until then a signal still reaches it.
            server_pid = servers[0]["pid"]
            deadline = time.monotonic() + 5
            while any(p["pid"] == server_pid for p in ws.ps()) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertFalse([p for p in ws.ps() if p["pid"] == server_pid])
            with self.assertRaises(CorralError) as nobody:
                ws.kill(servers[0]["pid"])
            self.assertIn("no process", str(nobody.exception))
            with self.assertRaises(CorralError) as bad:
                ws.kill(servers[0]["pid"], signal="NOPE")
            self.assertIn("signal", str(bad.exception))

    def test_a_snapshot_starts_a_new_workspace_with_the_same_files_from_the_client_and_the_cli(self):
        import subprocess
        from daemon_fixture import BIN
        with Client(self.sock) as c:
            with c.create_workspace(name="py-snap-src") as ws:
                blob = os.urandom(100000)
                ws.write("data/blob.bin", blob, parents=True)
                ws.exec(["sh", "-c", "ln -s data/blob.bin link && chmod 0700 data"], timeout=30)
                snap = ws.snapshot()
            self.assertTrue(snap["snapshot"].startswith("s-"), snap)
            self.assertTrue(snap["digest"].startswith("sha256:"), snap)
            self.assertEqual(snap["workspace_name"], "py-snap-src")
            self.assertIn(snap["snapshot"], [s["snapshot"] for s in c.list_snapshots()])
            with c.create_workspace(name="py-snap-copy", from_snapshot=snap["snapshot"]) as copy:
                self.assertEqual(copy.info["from_snapshot"], snap["snapshot"])
                self.assertEqual(copy.read("link"), blob)
                self.assertEqual(copy.stat("data")["mode"], 0o700)
                self.assertEqual(copy.stat("link")["symlink_target"], "data/blob.bin")
            # The CLI: list, start a workspace from it, remove it.
            cli = [BIN, "workspace", "--connect", self.sock]
            listed = subprocess.run(cli[:2] + ["snapshots"] + cli[2:], capture_output=True, text=True, timeout=60)
            self.assertEqual(listed.returncode, 0, listed.stderr)
            self.assertIn(snap["snapshot"], listed.stdout)
            made = subprocess.run(cli[:2] + ["create", "py-snap-cli", "--from-snapshot", snap["snapshot"]] + cli[2:],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(made.returncode, 0, made.stderr)
            self.assertEqual(c.workspace("py-snap-cli").read("data/blob.bin"), blob)
            c.workspace("py-snap-cli").end()
            gone = subprocess.run(cli[:2] + ["snapshot-rm", snap["snapshot"]] + cli[2:], capture_output=True, text=True,
                                  timeout=60)
            self.assertEqual(gone.returncode, 0, gone.stderr)
            with self.assertRaises(CorralError) as e:
                c.call("snapshot.inspect", {"snapshot": snap["snapshot"]})
            self.assertEqual(e.exception.code, NOT_FOUND)
            with self.assertRaises(CorralError) as e:
                c.create_workspace(from_snapshot=snap["snapshot"])
            self.assertEqual(e.exception.code, NOT_FOUND)


    def test_a_terminal_outlives_its_connection_and_is_attached_again_with_its_scrollback(self):
        with Client(self.sock) as c, c.create_workspace(name="py-term") as ws:
            with Client(self.sock) as first:
                t = first.workspace("py-term").terminal(["sh"], echo=False)
                self.assertTrue(t.terminal.startswith("t"), t.terminal)
                self.assertEqual(t.workspace, ws.id)
                t.write("echo first-$((6*7)) pid-$$\n")
                seen = b""
                while b"first-42" not in seen:
                    seen += t.read(timeout=10)
                pid = seen.split(b"pid-")[1].split()[0]
                t.detach()
                self.assertIsNone(t.wait(timeout=1))
            # That connection is gone; the terminal is not.
            [kept] = ws.terminals()
            self.assertEqual((kept["terminal"], kept["argv"]), (t.terminal, ["sh"]))
            again = ws.attach()
            self.assertTrue(again.writer)
            watching = Client(self.sock)  # one attach to a terminal per connection
            self.addCleanup(watching.close)
            watcher = watching.workspace("py-term").attach(t.terminal, writer=False)
            self.assertFalse(watcher.writer)
            again.write("echo again-$$\n")
            for s in (again, watcher):
                seen = b""
                while b"again-" + pid not in seen:
                    seen += s.read(timeout=10)
                self.assertIn(b"first-42", seen)  # the scrollback came first
            with self.assertRaises(CorralError) as e:
                watcher.write("echo typed\n")
            self.assertEqual(e.exception.code, CONFLICT)
            again.close()  # ends the terminal, for every viewer
            self.assertEqual(watcher.wait(timeout=10)["reason"], "cancelled")
            self.assertEqual(ws.terminals(), [])


@unittest.skipIf(PROBLEM, PROBLEM or "")
class AsyncWorkspaceTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(prefix="corral-py-ws-aio-")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    async def test_the_async_client_has_the_same_workspace(self):
        from corral import AsyncClient
        c = await AsyncClient.connect(self.daemon.sock)
        self.addAsyncCleanup(c.close)
        async with await c.create_workspace(name="py-async") as ws:
            big = os.urandom(PIECE + 10)
            await ws.write("big.bin", big)
            r = await ws.exec(["sh", "-c", "wc -c < big.bin"], timeout=30, changes=True)
            self.assertEqual(r["stdout"].strip(), str(len(big)), r)
            self.assertEqual(r["changes"], [])  # it only read
            self.assertEqual(await ws.read("big.bin"), big)
            self.assertEqual([w["name"] for w in await c.list_workspaces()], ["py-async"])
            self.assertEqual([(ch["change"], ch["path"]) for ch in await ws.changes()], [("added", "/work/big.bin")])
        with self.assertRaises(CorralError) as e:
            await c.workspace("py-async")
        self.assertEqual(e.exception.code, NOT_FOUND)

    async def test_the_async_client_detaches_and_takes_over_a_terminal(self):
        from corral import AsyncClient
        c = await AsyncClient.connect(self.daemon.sock)
        self.addAsyncCleanup(c.close)
        async with await c.create_workspace(name="py-async-term") as ws:
            t = await ws.terminal(["sh"], echo=False)
            c2 = await AsyncClient.connect(self.daemon.sock)
            self.addAsyncCleanup(c2.close)
            other = await (await c2.workspace("py-async-term")).attach(t.terminal, take_over=True)
            self.assertTrue(other.writer)
            await other.write("echo taken-$((3*3))\n")
            seen = b""
            while b"taken-9" not in seen:
                seen += await t.read(timeout=10)
            self.assertFalse(t.writer)  # session.writer_lost came before that output
            await t.detach()
            self.assertIsNone(await t.wait(timeout=1))
            self.assertEqual([k["viewers"] for k in await ws.terminals()], [1])


if __name__ == "__main__":
    unittest.main()
