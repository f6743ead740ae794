"""Throughput and latency of /bin/true through `corral serve` (used by scripts/bench).

Starts its own daemon (landlock tier, temp socket and state dir), then prints
  daemon_latency median_us=... p90_us=...   one client, one exec at a time
  daemon_burst size=8 ...   8 requests at once after an idle second, several rounds
  daemon_exec_per_s clients=N ...   for 1, 8 and 64 concurrent clients, one connection each,
      with the CPU per execution of the daemon itself and of its children (helpers, jails)
Usage: bench_daemon.py CORRAL_BINARY [N]"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corral import Client  # noqa: E402


def cpu_seconds(pid):
    """(the daemon's own CPU, its reaped children's) in seconds, from /proc/PID/stat. The
    children are the exec helpers with what they reaped: the jails' inits and programs."""
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    utime, stime, cutime, cstime = (int(x) / tick for x in fields[11:15])
    return utime + stime, cutime + cstime


def burst(sock, size, rounds):
    """Parallel tool calls: `size` requests at once after an idle second, `rounds` times.
    The first burst finds the pool as the sequential requests left it; the later ones find
    what the pool kept for the demand it saw."""
    clients = [Client(sock) for _ in range(size)]
    try:
        first, later, walls = [], [], []
        for r in range(rounds):
            time.sleep(1.0)
            go = threading.Barrier(size + 1)
            lat = [0.0] * size

            def one(i):
                go.wait()
                t = time.perf_counter()
                res = clients[i].exec(argv=["/bin/true"], tier="landlock")
                lat[i] = (time.perf_counter() - t) * 1e6
                assert res["exit_code"] == 0, res

            threads = [threading.Thread(target=one, args=(i,)) for i in range(size)]
            for th in threads:
                th.start()
            t = time.perf_counter()
            go.wait()
            for th in threads:
                th.join()
            walls.append((time.perf_counter() - t) * 1e3)
            (first if r == 0 else later).extend(lat)
        later.sort()
        print("daemon_burst tier=landlock size=%d rounds=%d first_median_us=%.1f median_us=%.1f p90_us=%.1f "
              "burst_median_ms=%.1f" % (size, rounds, sorted(first)[len(first) // 2], later[len(later) // 2],
                                       later[min(len(later) - 1, int(0.9 * len(later)))],
                                       sorted(walls[1:])[len(walls[1:]) // 2]))
    finally:
        for c in clients:
            c.close()


def main():
    binary = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    d = tempfile.mkdtemp(prefix="corral-bench-")
    sock = os.path.join(d, "corral.sock")
    daemon = subprocess.Popen([binary, "serve", "--socket", sock, "--state-dir", os.path.join(d, "state")],
                              cwd=d, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.05)
        with Client(sock) as c:
            for _ in range(10):  # warm-up: page cache, CAF workers, the helper's first exec
                c.exec(argv=["/bin/true"], tier="landlock")
            lat = []
            for _ in range(n):
                t = time.perf_counter()
                r = c.exec(argv=["/bin/true"], tier="landlock")
                lat.append((time.perf_counter() - t) * 1e6)
                assert r["exit_code"] == 0, r
            lat.sort()
            print("daemon_latency tier=landlock median_us=%.1f p90_us=%.1f n=%d" % (
                lat[len(lat) // 2], lat[min(len(lat) - 1, int(0.9 * len(lat)))], n))
        burst(sock, 8, max(5, n // 25))
        for clients in (1, 8, 64):
            per = max(1, n // clients) if clients > 1 else n
            errors = []

            def worker():
                try:
                    with Client(sock) as c:
                        for _ in range(per):
                            if c.exec(argv=["/bin/true"], tier="landlock")["exit_code"] != 0:
                                errors.append("exit")
                except Exception as e:  # reported, not hidden
                    errors.append(repr(e))

            threads = [threading.Thread(target=worker) for _ in range(clients)]
            before = cpu_seconds(daemon.pid)
            t = time.perf_counter()
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            took = time.perf_counter() - t
            time.sleep(0.3)  # the last helpers exit and are reaped
            after = cpu_seconds(daemon.pid)
            total = per * clients
            own, children = ((a - b) * 1000 / total for a, b in zip(after, before))
            print("daemon_exec_per_s tier=landlock clients=%d execs=%d per_s=%.1f errors=%d "
                  "daemon_cpu_ms=%.2f children_cpu_ms=%.2f" % (clients, total, total / took, len(errors), own, children))
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
