"""The lab's run folder (it writes there as root): a new private one, never where another user
could put a symlink (a predictable build/lab/<time> in a checkout another user owns)."""

import os
import stat

import pytest

from cpi2 import lab_loop


def test_the_run_folder_is_new_private_and_unpredictable(tmp_path, monkeypatch):
    monkeypatch.setattr(lab_loop, "ROOT", str(tmp_path))
    a, b = lab_loop.run_folder(), lab_loop.run_folder()
    assert a != b and os.path.dirname(a) == str(tmp_path / "build" / "lab")
    assert stat.S_IMODE(os.stat(a).st_mode) == 0o700 and os.listdir(a) == []


def test_a_checkout_others_may_write_is_not_written_into(tmp_path, monkeypatch):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    os.chmod(checkout, 0o777)  # another user could rename build/ away and plant a symlink
    monkeypatch.setattr(lab_loop, "ROOT", str(checkout))
    out = lab_loop.run_folder()
    assert not out.startswith(str(checkout)) and os.listdir(checkout) == [], out
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o700
    os.rmdir(out)
    # a symlink put at build/lab is not followed either
    os.chmod(checkout, 0o755)
    os.makedirs(checkout / "build")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", checkout / "build" / "lab")
    out = lab_loop.run_folder()
    assert not out.startswith(str(checkout)) and os.listdir(tmp_path / "elsewhere") == []
    os.rmdir(out)


def test_out_must_be_new_or_an_empty_folder_of_ours(tmp_path):
    assert lab_loop.run_folder(str(tmp_path / "new")) == str(tmp_path / "new")
    assert lab_loop.run_folder(str(tmp_path / "new")) == str(tmp_path / "new")  # empty, ours: taken
    (tmp_path / "new" / "x").write_text("x")
    with pytest.raises(SystemExit, match="not an empty folder"):
        lab_loop.run_folder(str(tmp_path / "new"))
    os.symlink(tmp_path / "new", tmp_path / "link")
    with pytest.raises(SystemExit, match="not an empty folder"):
        lab_loop.run_folder(str(tmp_path / "link"))
