"""The dev server's environment: GOMAXPROCS at half the CPUs unless the user set it."""

from temporal.devserver import dev_server_env


def test_gomaxprocs_is_half_the_cpus_at_least_one() -> None:
    assert dev_server_env({}, cpus=2)["GOMAXPROCS"] == "1"
    assert dev_server_env({}, cpus=16)["GOMAXPROCS"] == "8"
    assert dev_server_env({}, cpus=1)["GOMAXPROCS"] == "1"


def test_a_gomaxprocs_already_set_is_kept() -> None:
    env = dev_server_env({"GOMAXPROCS": "3", "PATH": "/bin"}, cpus=16)
    assert env == {"GOMAXPROCS": "3", "PATH": "/bin"}
