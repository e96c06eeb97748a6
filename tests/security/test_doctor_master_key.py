"""`memoir doctor` says whether the master key is there, valid and private."""

from pathlib import Path

from memoir import doctor
from memoir.crypto import MasterKey
from memoir.settings import Settings


def test_a_valid_master_key_in_the_environment_is_ok(tmp_path: Path) -> None:
    key = MasterKey.generate()
    check = doctor.check_master_key(Settings(master_key=key.encoded(), data_dir=tmp_path))
    assert (check.status, check.detail) == ("ok", f"MEMOIR_MASTER_KEY (key id {key.key_id})")


def test_a_malformed_master_key_fails_with_the_reason(tmp_path: Path) -> None:
    check = doctor.check_master_key(Settings(master_key="too-short", data_dir=tmp_path))
    assert check.status == "fail" and "32 bytes" in check.detail


def test_no_master_key_anywhere_warns_who_needs_one(tmp_path: Path) -> None:
    check = doctor.check_master_key(Settings(data_dir=tmp_path))
    assert check.status == "warn" and "memoir worker" in check.detail


def test_a_master_key_file_others_can_read_warns(tmp_path: Path) -> None:
    path = tmp_path / "master.key"
    path.write_text(MasterKey.generate().encoded())
    path.chmod(0o644)
    assert doctor.check_master_key(Settings(data_dir=tmp_path)).status == "warn"
    path.chmod(0o600)
    assert doctor.check_master_key(Settings(data_dir=tmp_path)).status == "ok"
