"""Initialisation paths, finalize, TLS off, several instances, profiling, and jobs of 1 to
8 PEs.  Each is its own run_pes job; the bodies live in jobs_init.py."""

import pytest

import jobs_init
from shmem import testing


def test_every_init_path_and_its_bad_inputs():
    assert testing.run_pes(2, jobs_init.init_paths, init=False, timeout=120) == [0, 1]


def test_init_without_tls():
    assert testing.run_pes(2, jobs_init.tls_off, init=False, timeout=60) == [0, 1]


def test_two_instances_and_cross_instance_checks():
    assert testing.run_pes(2, jobs_init.multi_instance, timeout=60) == [0, 1]


def test_profiling_on_the_pe_named_by_SHMEM_CYCLE_PROF_PE():
    assert testing.run_pes(2, jobs_init.profiling_on, env={"SHMEM_CYCLE_PROF_PE": "0"}, timeout=60) == [0, 1]


@pytest.mark.parametrize("npes", [1, 3, 8])
def test_jobs_of_1_to_8_pes(npes):
    total = npes * (npes + 1) // 2
    assert testing.run_pes(npes, jobs_init.ring_sum, timeout=120, mem_size=8 << 20) == [total] * npes


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    """A CA, and a certificate signed by it whose key is encrypted with "secret-pw"."""
    import shutil
    import subprocess

    openssl = shutil.which("openssl")
    if not openssl:
        pytest.skip("the openssl command is not installed (apt-get install openssl): cannot make test certificates")
    d = tmp_path_factory.mktemp("tls")

    def run(*args):
        subprocess.run([openssl, *args], cwd=d, check=True, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    run("req", "-x509", *ec, "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=shmem-ca")
    run("req", *ec, "-keyout", "node.key", "-passout", "pass:secret-pw", "-out", "node.csr", "-subj", "/CN=node")
    run("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "node.pem", "-days", "2")
    return str(d)


def test_tls_with_certificates_and_a_decrypt_callback(certificates):
    assert testing.run_pes(2, jobs_init.tls_with_certificates, certificates, init=False, timeout=60) == [0, 1]


def test_tls_with_a_wrong_key_password_fails_cleanly(certificates):
    assert testing.run_pes(1, jobs_init.tls_with_certificates, certificates, False, init=False, timeout=60) == [0]


def test_finalize_hooks_run_before_the_heap_goes():
    assert testing.run_pes(2, jobs_init.finalize_hooks, timeout=60) == ["NOT_INITIALIZED"] * 2
