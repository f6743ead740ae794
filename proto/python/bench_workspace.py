"""Workspace latencies through `corral serve` (used by scripts/bench-workspace).

Starts its own daemon (landlock tier, temp socket, state and workspaces dirs), then prints,
all measured in this one run, median and p90 in microseconds:
  posix_spawn          /bin/true, no isolation: the floor
  oneshot_exec         exec /bin/true in a fresh boundary (no workspace)
  workspace_create_to_first_exec   workspace.create, then exec /bin/true in it
  workspace_exec       exec /bin/true in a workspace made earlier (its files kept)
  workspace_exec_changes           the same with changes=True over IMAGE_FILES files
  workspace_exec_changes_blob      the same once SNAP_BLOB_MB more are there, hashed before (the
                       hash cache's case), beside sha256sum_blob: one read of the blob
  podman_run_rm        podman run --rm of the local busybox image, true (when podman is here)
  snapshot / restore   workspace.snapshot, and workspace.create from it, of IMAGE_FILES small
                       files and SNAP_BLOB_MB of random bytes, against GNU tar --zstd
                       archiving and unpacking the same directory from the host (tar_c, tar_x)
and each one's ratio to posix_spawn, and workspace_exec's to oneshot_exec.
Usage: bench_workspace.py CORRAL_BINARY [N] [PODMAN_IMAGE]"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corral import Client  # noqa: E402

IMAGE_FILES = 1000
SNAP_BLOB_MB = 32


def stats(samples):
    s = sorted(samples)
    return s[len(s) // 2], s[min(len(s) - 1, int(0.9 * len(s)))]


def timed(n, fn):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e6)
    return out


def spawn_true():
    pid = os.posix_spawn("/bin/true", ["/bin/true"], {})
    os.waitpid(pid, 0)


def snapshot_figures(c, ws, root, scratch, k, figures):
    ws.write("blob.bin", os.urandom(SNAP_BLOB_MB << 20))
    snaps, restored = [], []
    figures["snapshot"] = timed(k, lambda: snaps.append(ws.snapshot()["snapshot"]))
    figures["restore"] = timed(k, lambda: restored.append(c.create_workspace(from_snapshot=snaps[0])))
    for w in restored:
        w.end()
    for s in snaps:
        c.remove_snapshot(s)
    archive = os.path.join(scratch, "peer.tar.zst")
    figures["tar_c"] = timed(k, lambda: subprocess.run(["tar", "--zstd", "-cf", archive, "-C", root, "."], check=True))
    # Each unpack into a fresh empty directory, made before the clock starts (as a restore's is).
    targets = [os.path.join(scratch, "peer-x%d" % i) for i in range(k)]
    for t in targets:
        os.mkdir(t)
    figures["tar_x"] = timed(k, lambda: subprocess.run(["tar", "--zstd", "-xf", archive, "-C", targets.pop()], check=True))


def main():
    binary = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    image = sys.argv[3] if len(sys.argv) > 3 else ""
    d = tempfile.mkdtemp(prefix="corral-bench-ws-")
    sock = os.path.join(d, "corral.sock")
    config = os.path.join(d, "corral.toml")
    with open(config, "w") as f:
        # Room for one workspace per create-to-first-exec sample, each ended after.
        f.write("[sandbox]\ntier = \"landlock\"\n[sandbox.workspaces]\nmax_per_owner = 32\nmax_total = 32\n")
    env = dict(os.environ, CORRAL_WORKSPACES_DIR=os.path.join(d, "workspaces"))
    daemon = subprocess.Popen([binary, "serve", "--socket", sock, "--state-dir", os.path.join(d, "state"),
                               "--config", config], cwd=d, env=env, stderr=subprocess.DEVNULL)
    figures = {}
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.05)
        with Client(sock) as c:
            def ok(r):
                assert r["exit_code"] == 0, r
                return r

            for _ in range(10):  # warm-up: page cache, CAF workers, the helper's first exec
                ok(c.exec(argv=["/bin/true"]))
            figures["posix_spawn"] = timed(n, spawn_true)
            figures["oneshot_exec"] = timed(n, lambda: ok(c.exec(argv=["/bin/true"])))

            def create_then_exec():
                ws = c.create_workspace()
                ok(ws.exec(["/bin/true"]))
                created.append(ws)

            created = []
            samples = []
            for _ in range(n):
                samples += timed(1, create_then_exec)
                created.pop().end()  # outside the timing: ending is not on the first exec's path
            figures["workspace_create_to_first_exec"] = samples

            with c.create_workspace(name="bench") as ws:
                ok(ws.exec(["sh", "-c", "mkdir -p tree && cd tree && i=0; while [ $i -lt %d ]; do "
                                  "echo $i > f$i; i=$((i+1)); done" % IMAGE_FILES]))
                figures["workspace_exec"] = timed(n, lambda: ok(ws.exec(["/bin/true"])))
                figures["workspace_exec_changes"] = timed(max(10, n // 5), lambda: ok(ws.exec(["/bin/true"], changes=True)))
                snapshot_figures(c, ws, os.path.join(d, "workspaces", ws.id, "root"), d, max(5, n // 20), figures)
                # The blob is older than the hash cache's racy margin (2 s) now: its digest
                # comes from the cache, not from reading 32 MiB twice per exec.
                time.sleep(2.5)
                figures["workspace_exec_changes_blob"] = timed(max(10, n // 5),
                                                               lambda: ok(ws.exec(["/bin/true"], changes=True)))
                blob = os.path.join(d, "workspaces", ws.id, "root", "blob.bin")
                figures["sha256sum_blob"] = timed(max(5, n // 20), lambda: subprocess.run(
                    ["sha256sum", blob], check=True, stdout=subprocess.DEVNULL))
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
        shutil.rmtree(d, ignore_errors=True)

    if image and shutil.which("podman"):
        # The engine flags the container tier passes (tiers/external/container_tier.cpp):
        # with podman's defaults crun refuses a hard nofile limit below 1M and a hybrid
        # cgroup hierarchy, as on this machine.
        def podman():
            subprocess.run(["podman", "--runtime=runc", "--cgroup-manager=cgroupfs", "run", "--rm",
                            "--network=none", "--cgroups=no-conmon", "--ulimit", "nofile=4096:4096",
                            "--ulimit", "nproc=4096:4096", image, "true"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        podman()  # warm-up
        figures["podman_run_rm"] = timed(max(5, n // 10), podman)

    floor = stats(figures["posix_spawn"])[0]
    for name, samples in figures.items():
        med, p90 = stats(samples)
        print("%s median_us=%.1f p90_us=%.1f n=%d ratio_to_posix_spawn=%.1f" % (name, med, p90, len(samples), med / floor))
    oneshot = stats(figures["oneshot_exec"])[0]
    print("workspace_exec_vs_oneshot ratio=%.2f" % (stats(figures["workspace_exec"])[0] / oneshot))
    print("workspace_create_to_first_exec_vs_oneshot ratio=%.2f" %
          (stats(figures["workspace_create_to_first_exec"])[0] / oneshot))
    print("snapshot_vs_tar_c ratio=%.2f" % (stats(figures["snapshot"])[0] / stats(figures["tar_c"])[0]))
    print("restore_vs_tar_x ratio=%.2f" % (stats(figures["restore"])[0] / stats(figures["tar_x"])[0]))
    if "podman_run_rm" in figures:
        print("workspace_exec_vs_podman_run_rm ratio=%.3f" %
              (stats(figures["workspace_exec"])[0] / stats(figures["podman_run_rm"])[0]))
    else:
        print("podman_run_rm skipped: no podman here, or no image given")


if __name__ == "__main__":
    main()
