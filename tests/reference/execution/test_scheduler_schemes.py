"""``--scheduler ADDRESS`` (verify, prove --mutants, check): every scheme the address check accepts is one a Dask
client here can use to reach a scheduler in another process — checked against ``distributed.comm.registry``, not
assumed; anything else (``http://``, ``inproc://``, ``ucx://`` without UCX-Py, ``tls://`` without Dask's TLS
settings, a transport Dask does not have) is refused in one line, exit 2, naming the value and the schemes usable
here.  A well-formed address that cannot be reached is one line too, whatever Dask raises."""

from __future__ import annotations

import pytest

from formal.errors import ConfigError, FormalError
from formal.tools.cli import main
from reference.execution import clusters
from reference.execution.executors import parse_scheduler

distributed = pytest.importorskip("distributed")

REFUSED = [("http://h:1", "Dask has no http:// transport"), ("udp://h:8786", "Dask has no udp:// transport"),
           ("inproc://h:1", "inside the same process"), ("ucx://h:1", "needs UCX-Py"),
           ("tls://127.0.0.1:8786", "needs Dask's TLS settings")]


@pytest.mark.parametrize("address, why", REFUSED)
def test_a_scheme_no_client_here_can_use_is_refused(address, why):
    with pytest.raises(ConfigError) as refused:
        parse_scheduler(address, 4)
    message = str(refused.value)
    assert f"--scheduler {address!r}: " in message and why in message
    assert message.endswith("the schemes usable here: tcp://, ws://, wss://")


@pytest.mark.parametrize("command", [["verify", "--only", "attention", "--dry-run"], ["verify", "--mutants"],
                                     ["prove", "--mutants"]])
@pytest.mark.parametrize("address", ["http://h:1", "inproc://h:1", "ucx://h:1"])
def test_the_commands_refuse_it_in_one_line(capsys, command, address):
    """The issue: these passed the address check, then crashed ("internal error", exit 1) or said nonsense."""
    assert main([*command, "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("formal-transformers: error: --scheduler ")
    assert address in err and "internal error" not in err


def test_each_scheme_accepted_is_one_dask_has_and_can_use():
    usable = [name for name, why in clusters.schemes().items() if why is None]
    assert {"tcp", "ws", "wss"} <= set(usable) and "inproc" not in usable and "ucx" not in usable
    from distributed.comm import registry
    for name in usable:
        assert registry.get_backend(name).get_connector() is not None
        assert parse_scheduler(f"{name}://127.0.0.1:8786", 4) == ("address", f"{name}://127.0.0.1:8786")


@pytest.mark.parametrize("protocol", ["tcp", "ws"])
def test_an_accepted_scheme_reaches_a_scheduler(protocol):
    """Not a guess: a scheduler listening with the scheme takes a client made as ``--scheduler`` makes it."""
    import logging
    with distributed.LocalCluster(n_workers=0, processes=False, protocol=f"{protocol}://", dashboard_address=":0",
                                  silence_logs=logging.CRITICAL) as cluster:
        address = cluster.scheduler_address
        assert address.startswith(f"{protocol}://") and parse_scheduler(address, 4) == ("address", address)
        client = clusters._client(distributed, address)
        try:
            assert client.scheduler_info()["address"] == address
        finally:
            client.close()


def test_tls_is_accepted_once_dask_has_its_settings():
    pytest.importorskip("cryptography")
    import dask
    from distributed.security import Security
    temporary = Security.temporary()
    settings = {"distributed.comm.tls.ca-file": temporary.tls_ca_file,
                "distributed.comm.tls.client.cert": temporary.tls_client_cert,
                "distributed.comm.tls.client.key": temporary.tls_client_key}
    with dask.config.set(settings):
        assert clusters.schemes()["tls"] is None
        assert parse_scheduler("tls://10.0.0.5:8786", 4) == ("address", "tls://10.0.0.5:8786")
    with dask.config.set({**settings, "distributed.comm.tls.ca-file": "/nonexistent/ca.pem"}):
        with pytest.raises(ConfigError, match="cannot be loaded"):
            parse_scheduler("tls://10.0.0.5:8786", 4)


def test_an_address_that_cannot_be_reached_is_one_line(monkeypatch):
    monkeypatch.setattr(clusters, "CONNECT_TIMEOUT", 1)
    with pytest.raises(FormalError) as failed, clusters.connect(("address", "tcp://127.0.0.1:1")):
        pass
    assert str(failed.value).startswith("could not reach the Dask scheduler at 'tcp://127.0.0.1:1': ")
    assert "\n" not in str(failed.value)


def test_whatever_dask_raises_making_the_client_is_one_line(monkeypatch):
    """A TLS handshake refused, a transport failing as it connects: Dask raises TypeError, SSLError, its own comm
    errors — the address was well formed, so it is one line (exit 2), not an internal error."""
    def refuses(address, timeout):
        raise TypeError("TLS expects a `ssl_context` argument of type ssl.SSLContext\n(perhaps check your TLS "
                        "configuration?) Instead got None")
    monkeypatch.setattr(distributed, "Client", refuses)
    with pytest.raises(FormalError) as failed, clusters.connect(("address", "tls://10.0.0.5:8786")):
        pass
    assert str(failed.value) == ("could not reach the Dask scheduler at 'tls://10.0.0.5:8786': TLS expects a "
                                 "`ssl_context` argument of type ssl.SSLContext (perhaps check your TLS "
                                 "configuration?) Instead got None")
