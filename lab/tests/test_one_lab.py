"""One lab at a time on a machine (lab.one_at_a_time): every checkout's lab works under the same
cgroups and starts by removing what it finds there. A second lab (another checkout's make test, a
calibration) waits for the first instead of killing its tasks; interrupted while it waits, it
leaves everything as it was. Skipped with the reason where the lab cannot run."""

import os
import signal
import subprocess
import sys
import time

import pytest

from cpi2 import lab, lab_loop

WHY = lab_loop.cannot_run()
pytestmark = pytest.mark.skipif(WHY is not None, reason="the lab cannot run here: %s" % WHY)


def test_a_second_lab_waits_and_leaves_the_first_ones_tasks_alone(tmp_path):
    with lab.one_at_a_time():  # this test is the first lab
        cg = lab.Cgroup("first-lab-of-test-one-lab")
        first = lab.start_in(cg, ["sleep", "120"])
        second = None
        try:
            second = subprocess.Popen(
                [sys.executable, "-m", "cpi2.lab", "run", "--schedule", "40,25,10", "--out", str(tmp_path / "run")],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            said = ""
            deadline = time.time() + 60
            while "another lab runs on this machine" not in said and time.time() < deadline:
                line = second.stderr.readline()
                if not line:
                    break
                said += line
            assert "another lab runs on this machine (pid %d" % os.getpid() in said, said
            time.sleep(2)  # it would have removed the lab's cgroups by now
            assert first.poll() is None, "the second lab killed the first one's task"
            assert all(os.path.isdir(d) for d in cg.dirs)
            second.send_signal(signal.SIGINT)
            rest = second.communicate(timeout=30)[1]
            assert second.returncode == 130, said + rest
            assert "while waiting for another lab: nothing started" in rest, rest
            assert first.poll() is None and all(os.path.isdir(d) for d in cg.dirs)
        finally:
            if second and second.poll() is None:
                second.kill()
                second.wait()
            first.kill()
            first.wait()
            lab.kill_cgroup(cg)
            for d in reversed(cg.dirs):
                os.rmdir(d)
