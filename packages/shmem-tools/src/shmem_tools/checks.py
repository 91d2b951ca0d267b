"""The environment checks of ``shmem-config --check``.

Each check returns a ``Check``: a status (PASS, WARN or FAIL), a one-line reason and,
unless it passed, a one-line fix.  WARN never fails the run; any FAIL does.
"""

import ctypes
import ctypes.util
import mmap
import os
import resource
import socket
import time

from . import _install

PASS, WARN, FAIL = "PASS", "WARN", "FAIL"

#: The self-test's default time limit in seconds (start, init, steps, finalize).
SELFTEST_TIMEOUT = 60.0


class Check:
    def __init__(self, name, status, reason, fix="", details=None):
        self.name = name
        self.status = status
        self.reason = reason
        self.fix = fix if status != PASS else ""
        self.details = details or {}

    def as_dict(self):
        return {"name": self.name, "status": self.status, "reason": self.reason, "fix": self.fix,
                "details": self.details}


# ---------------------------------------------------------------------------
# The native library
# ---------------------------------------------------------------------------


def check_library(runtime):
    if not runtime["ok"]:
        if os.environ.get(_install.ENV_LIBRARY):
            fix = (f"point {_install.ENV_LIBRARY} at an existing libaclshmem.so, or unset it to use the "
                   "shmem-native package")
        else:
            fix = "pip install shmem-native (or install libaclshmem where the loader finds it)"
        return Check("native library", FAIL, _short_load_error(runtime["error"]), fix,
                     {"error": runtime["error"]})
    return Check("native library", PASS,
                 f"{runtime['name']} loaded from {runtime['path']} (via {runtime['source']})",
                 details={k: runtime[k] for k in ("path", "source", "name", "api_version")})


def _short_load_error(error):
    """The loader's own words, without the long search story."""
    env = os.environ.get(_install.ENV_LIBRARY)
    if env:
        try:
            ctypes.CDLL(env)
        except OSError as exc:
            return f"{_install.ENV_LIBRARY}={env} does not load: {_one_line(exc)}"
    text = _one_line(error)
    return text if len(text) <= 200 else text[:197] + "..."


def check_abi(runtime, installation):
    name = "ABI (library vs shmem-core)"
    if not runtime["ok"]:
        return Check(name, FAIL, "not checked: the native library does not load",
                     "fix the 'native library' check first")
    api = tuple(runtime["api_version"])
    problems = []
    details = {"library_api": list(api)}
    expected, source = _install.expected_api_version()
    if expected is not None:
        details["expected_api"] = list(expected)
        details["expected_from"] = source
        if tuple(expected) != api:
            problems.append(f"{source} says C API {expected[0]}.{expected[1]}, the library is {api[0]}.{api[1]}")
    try:
        declared = _install.declared_functions()
        target = runtime["mapped"][0] if runtime["mapped"] else runtime["path"]
        missing = _install.missing_symbols(target, declared)
    except Exception as exc:
        declared, missing = [], []
        problems.append(f"cannot compare the symbols: {exc}")
    details["declared_functions"] = len(declared)
    details["missing_functions"] = missing
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        problems.append(f"{len(missing)} of {len(declared)} functions shmem-core binds are missing: {shown}")
    if installation is not None:
        hv = _install.header_version(installation.include_dir)
        if hv is not None:
            details["header_api"] = list(hv)
            if hv != api:
                problems.append(f"the headers in {installation.include_dir} are C API {hv[0]}.{hv[1]}, "
                                f"the loaded library {api[0]}.{api[1]}")
    if problems:
        return Check(name, FAIL, "; ".join(problems),
                     "install matching versions: pip install --force-reinstall shmem-native shmem-core "
                     "(or unset ACLSHMEM_LIBRARY)", details)
    return Check(name, PASS,
                 f"C API {api[0]}.{api[1]}; all {len(declared)} functions shmem-core binds are exported",
                 details=details)


def check_packages(packages, runtime):
    compatible, problems = _install.compatibility(packages, runtime if runtime["ok"] else None)
    versions = ", ".join(f"{d} {i['version'] or '?'}" for d, i in packages.items() if i["installed"])
    absent = [d for d, i in packages.items() if not i["installed"]]
    if not compatible:
        return Check("package versions", FAIL, "; ".join(problems),
                     "pip install -U shmem-native shmem-core shmem-tools (matching releases)",
                     {"problems": problems})
    text = versions + (f" ({', '.join(absent)} not installed)" if absent else "")
    return Check("package versions", PASS, text)


def check_duplicates(runtime):
    mapped = runtime["mapped"]
    if len(mapped) > 1:
        return Check("single libaclshmem", FAIL,
                     f"{len(mapped)} different copies are loaded in one process: {', '.join(mapped)}",
                     "uninstall the extra copies or unset ACLSHMEM_LIBRARY / LD_PRELOAD so only one is found",
                     {"loaded_paths": mapped})
    if not mapped:
        return Check("single libaclshmem", WARN, "no libaclshmem is mapped in this process",
                     "fix the 'native library' check first")
    return Check("single libaclshmem", PASS, f"one copy mapped: {mapped[0]}", details={"loaded_paths": mapped})


# ---------------------------------------------------------------------------
# The operating system
# ---------------------------------------------------------------------------


def check_memfd(size=1 << 20):
    """Creates a memfd, maps it shared twice, hands the fd over a Unix socket (as the
    library does between PEs) and checks that the three mappings see one memory."""
    name = "memfd + shared mapping"
    if not hasattr(os, "memfd_create"):
        return Check(name, FAIL, "os.memfd_create is missing (Linux 3.17+ and Python 3.8+ needed)",
                     "run on a Linux kernel with memfd_create")
    fds = []
    maps = []
    try:
        fd = os.memfd_create("shmem-config-check", os.MFD_CLOEXEC)
        fds.append(fd)
        os.ftruncate(fd, size)
        a = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        b = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        maps += [a, b]
        left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        with left, right:
            socket.send_fds(left, [b"heap"], [fd])
            _msg, received, _flags, _addr = socket.recv_fds(right, 16, 1)
        fds += received
        if not received:
            raise OSError("no file descriptor arrived over the Unix socket (SCM_RIGHTS)")
        c = mmap.mmap(received[0], size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        maps.append(c)
        a[0:8] = b"SHMEMchk"
        a[size - 8:size] = b"lastpage"
        c[4096:4100] = b"back"
        if b[0:8] != b"SHMEMchk" or c[size - 8:size] != b"lastpage" or a[4096:4100] != b"back":
            return Check(name, FAIL, "writes through one mapping of a memfd are not seen through the others",
                         "report this kernel; shared memfd mappings are required")
    except OSError as exc:
        return Check(name, FAIL, f"memfd_create/mmap failed: {exc}",
                     "allow memfd_create and shared mappings (seccomp profile, container runtime, vm.overcommit)")
    finally:
        for m in maps:
            m.close()
        for fd in fds:
            os.close(fd)
    return Check(name, PASS, f"{size >> 20} MiB memfd mapped shared 3 times (one passed over SCM_RIGHTS)")


def _limit_text(v):
    return "unlimited" if v == resource.RLIM_INFINITY else str(v)


def check_nofile(want=1024):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    reason = f"soft {_limit_text(soft)}, hard {_limit_text(hard)}"
    details = {"soft": soft, "hard": hard}
    if soft != resource.RLIM_INFINITY and soft < want:
        fix = (f"ulimit -n {min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536}"
               if hard == resource.RLIM_INFINITY or hard >= want
               else f"raise the hard limit (limits.conf / systemd LimitNOFILE) to at least {want}")
        return Check("open files (RLIMIT_NOFILE)", WARN,
                     f"{reason}: each PE keeps sockets and memfds per peer; below {want} large jobs fail",
                     fix, details)
    return Check("open files (RLIMIT_NOFILE)", PASS, reason, details=details)


def check_memlock(want=64 << 20):
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    reason = f"soft {_limit_text(soft)}, hard {_limit_text(hard)}"
    details = {"soft": soft, "hard": hard}
    if soft != resource.RLIM_INFINITY and soft < want:
        if _load_first(["libucp.so.0", ctypes.util.find_library("ucp")])[0] is None:
            return Check("locked memory (RLIMIT_MEMLOCK)", PASS,
                         f"{reason} bytes (only RDMA through UCX locks memory; same-node heaps do not)",
                         details=details)
        return Check("locked memory (RLIMIT_MEMLOCK)", WARN,
                     f"{reason} bytes: enough for same-node PEs, too little for RDMA registration by UCX",
                     "ulimit -l unlimited (limits.conf memlock) before multi-host jobs over RDMA", details)
    return Check("locked memory (RLIMIT_MEMLOCK)", PASS, f"{reason} bytes", details=details)


def check_loopback():
    name = "loopback TCP"
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
            srv.bind(("127.0.0.1", 0))
            srv.listen(1)
            port = srv.getsockname()[1]
            with socket.create_connection(("127.0.0.1", port), timeout=5) as cli:
                conn, _ = srv.accept()
                with conn:
                    conn.settimeout(5)
                    cli.sendall(b"ping")
                    got = conn.recv(4)
                    conn.sendall(b"pong")
                    back = cli.recv(4)
        if got != b"ping" or back != b"pong":
            return Check(name, FAIL, "bytes sent over 127.0.0.1 did not come back intact",
                         "check firewall rules on the lo interface")
    except OSError as exc:
        return Check(name, FAIL, f"127.0.0.1 is not usable: {exc}",
                     "bring up the loopback interface (ip link set lo up) or allow local TCP")
    return Check(name, PASS, f"listen, connect and echo on 127.0.0.1:{port}")


def _port_free(host, port):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def check_ports(max_probe=256):
    """SHMEM_INSTANCE_PORT_RANGE (DEFAULT-mode instances) and SHMEM_UID_SESSION_ID
    (PE 0's listen address in UID mode): the ports they name must be free."""
    name = "port range"
    text = os.environ.get("SHMEM_INSTANCE_PORT_RANGE", "").strip()
    session = os.environ.get("SHMEM_UID_SESSION_ID", "").strip()
    notes = []
    if text:
        try:
            a, b = (int(x) for x in text.split(":"))
            if not (1024 < a <= b <= 65535):
                raise ValueError
        except ValueError:
            return Check(name, FAIL, f"SHMEM_INSTANCE_PORT_RANGE={text!r} is not start:end with 1024 < start <= end <= 65535",
                         "export SHMEM_INSTANCE_PORT_RANGE=20000:20100 (for example)")
        ports = list(range(a, b + 1))
        step = max(1, len(ports) // max_probe)
        probed = ports[::step]
        busy = [p for p in probed if not _port_free("0.0.0.0", p)]
        if len(busy) == len(probed):
            return Check(name, FAIL, f"every probed port of SHMEM_INSTANCE_PORT_RANGE={text} is in use",
                         "choose a free range for SHMEM_INSTANCE_PORT_RANGE")
        if busy:
            return Check(name, WARN,
                         f"{len(busy)} of {len(probed)} probed ports of {text} are in use: {busy[:8]}",
                         "widen SHMEM_INSTANCE_PORT_RANGE or stop what holds those ports",
                         {"busy": busy})
        notes.append(f"SHMEM_INSTANCE_PORT_RANGE={text}: {len(probed)} ports probed, all free")
    if session:
        host, _, port = session.rpartition(":")
        host = host.strip("[]") or "0.0.0.0"
        try:
            port = int(port)
        except ValueError:
            return Check(name, FAIL, f"SHMEM_UID_SESSION_ID={session!r} is not ip:port",
                         "export SHMEM_UID_SESSION_ID=127.0.0.1:8666 (for example) or unset it")
        try:
            free = _port_free(host, port)
        except OSError as exc:
            return Check(name, WARN, f"SHMEM_UID_SESSION_ID={session}: cannot probe ({exc})",
                         "check the address in SHMEM_UID_SESSION_ID")
        if not free:
            return Check(name, WARN, f"SHMEM_UID_SESSION_ID={session}: the port is in use here "
                         "(fine on other hosts; PE 0 must be able to bind it)",
                         "pick a free port for SHMEM_UID_SESSION_ID")
        notes.append(f"SHMEM_UID_SESSION_ID={session}: port free")
    if not notes:
        return Check(name, PASS, "no fixed ports configured: each job's PE 0 picks a free port itself")
    return Check(name, PASS, "; ".join(notes))


def _load_first(names):
    errors = []
    for n in names:
        if not n:
            continue
        try:
            return ctypes.CDLL(n), n, errors
        except OSError as exc:
            errors.append(f"{n}: {exc}")
    return None, None, errors


def check_openssl():
    name = "OpenSSL (TLS)"
    lib, which, errors = _load_first(["libssl.so.3", "libssl.so.1.1", ctypes.util.find_library("ssl")])
    if lib is None:
        return Check(name, FAIL, "libssl does not load: " + ("; ".join(errors) or "not found"),
                     "apt-get install libssl3 (TLS is on by default), or turn it off with "
                     "set_conf_store_tls(False, '')")
    try:
        fn = lib.OpenSSL_version
        fn.restype = ctypes.c_char_p
        fn.argtypes = [ctypes.c_int]
        version = fn(0).decode("ascii", "replace")
    except AttributeError:
        return Check(name, FAIL, f"{which} loads but is not OpenSSL 1.1.1+ (no OpenSSL_version)",
                     "install OpenSSL 1.1.1 or newer (TLS 1.3)")
    return Check(name, PASS, f"{version} ({which}); the control plane uses TLS 1.3 by default",
                 details={"library": which, "version": version})


def _installed_ucx():
    """UCX's version text ("1.13.1") when libucp loads here, else None."""
    lib, _which, _errors = _load_first(["libucp.so.0", ctypes.util.find_library("ucp")])
    if lib is None:
        return None
    try:
        fn = lib.ucp_get_version_string
        fn.restype = ctypes.c_char_p
        return fn().decode("ascii", "replace")
    except AttributeError:
        return "(version unknown)"


UCX_CHECK = "UCX plug-in (multi-node)"


def check_ucx_plugin(runtime):
    """The UCX transport plug-in that libaclshmem loads in jobs with PEs on other nodes, as
    the library describes it: PASS when it loads and was built for this library's version;
    WARN when there is none (single-node jobs never load it), when UCX itself is missing
    here or when SHMEM_UCX_PLUGIN=none disables it; FAIL when SHMEM_UCX_PLUGIN names a file
    that is no plug-in, or when a plug-in is of another version or does not load."""
    name = UCX_CHECK
    env = _install.ENV_UCX_PLUGIN
    if not runtime["ok"]:
        return Check(name, WARN, "not checked: the native library does not load",
                     "fix the 'native library' check first")
    info = _install.ucx_plugin(runtime)
    details = {k: info[k] for k in ("path", "source", "status", "found", "loaded", "abi", "expected_abi", "version",
                                    "name", "library_version", "version_matches", "error", "data_plane",
                                    "data_plane_error")}
    if info["status"] == "disabled":
        return Check(name, WARN, f"{info['error']}: jobs with PEs on other nodes fail at init (jobs on one "
                     "node do not need it)", f"for multi-node jobs, unset {env}", details)
    return _plugin_problem(info, details) or _plugin_ok(info, details)


def _plugin_problem(info, details):
    """The check of a plug-in that is missing, does not load or is of another build; None
    when it is usable."""
    name, env = UCX_CHECK, _install.ENV_UCX_PLUGIN
    path = info["path"]
    plugin_file = os.path.basename(path)
    forced = info["source"] == env
    where = f"{env}={path}" if forced else path
    rebuild = ("install UCX (apt-get install libucx-dev) and rebuild libaclshmem with meson -Ducx=enabled "
               "(a shmem-native wheel built there carries it too)")
    version = info["library_version"]
    if not info["found"]:
        if forced:
            return Check(name, FAIL, f"{where} does not exist: multi-node jobs would fail at init",
                         f"point {env} at a {plugin_file} of libaclshmem {version or ''}{' ' if version else ''}"
                         "or unset it", details)
        ucx = _installed_ucx()
        have = f"UCX {ucx} is installed here, but this" if ucx else "UCX is not installed here, and this"
        return Check(name, WARN,
                     f"no {plugin_file} beside {os.path.dirname(path)}: {have} libaclshmem was built without "
                     "the UCX transport, so PEs on other nodes cannot reach each other (jobs on one node do "
                     "not need it)",
                     f"for multi-node jobs: {rebuild}, or point {env} at a {plugin_file} of the same version",
                     details)
    if info["version_matches"] is False or info["status"] == "mismatch":
        return Check(name, FAIL,
                     f"{where} was built for libaclshmem {info['version']} (plug-in ABI {info['abi']}), the "
                     f"loaded library is {version} (ABI {info['expected_abi']}): multi-node jobs would fail at init",
                     (f"point {env} at the {plugin_file} of libaclshmem {version}, or unset it" if forced else
                      f"reinstall libaclshmem and its plug-in from one build ({rebuild})"), details)
    if not info["loaded"]:
        if info["missing_ucx"] and not forced:
            return Check(name, WARN,
                         f"{path} does not load: {info['missing_ucx']} (UCX) is not installed here, so "
                         "multi-node jobs fail at init (jobs on one node do not need it)",
                         "apt-get install libucx0 (UCX 1.10 or newer) on every node", details)
        return Check(name, FAIL, f"{where} does not load as a plug-in: {_one_line(info['error'])}",
                     (f"point {env} at the {plugin_file} built with this libaclshmem, or unset it" if forced else
                      f"reinstall libaclshmem with its plug-in ({rebuild}), or remove the damaged file"),
                     details)
    if info["data_plane_error"]:
        return Check(name, FAIL, f"{info['data_plane_error']}: multi-node jobs would fail at init",
                     "set SHMEM_UCX_DATA_PLANE to am, rma or auto (or unset it), the same on every node",
                     details)
    return None


def _plugin_ok(info, details):
    how = f"({_install.ENV_UCX_PLUGIN})" if info["source"] == _install.ENV_UCX_PLUGIN else "beside the library"
    plane = f"; data plane here: {info['data_plane']}" if info["data_plane"] else ""
    return Check(UCX_CHECK, PASS,
                 f"{info['name'] or 'UCX'} plug-in {info['path']} {how}, built for libaclshmem {info['version']} "
                 f"(plug-in ABI {info['abi']}); loaded only by jobs with PEs on other nodes{plane}",
                 details=details)


# ---------------------------------------------------------------------------
# The live self-test
# ---------------------------------------------------------------------------


def check_selftest(runtime, npes=2, timeout=SELFTEST_TIMEOUT):
    name = f"{npes}-PE self-test"
    if not runtime["ok"]:
        return Check(name, FAIL, "not run: the native library does not load", "fix the 'native library' check first")
    from ._launch import run_module

    t = time.monotonic()
    job = run_module(npes, "shmem_tools._selftest", mem_size="16M", timeout=timeout, echo=False)
    elapsed = time.monotonic() - t
    done = {pe for pe, r in job.records if r.get("done") and r.get("ok")}
    failures = [(pe, r) for pe, r in job.records if r.get("ok") is False]
    steps = {}
    for pe, r in job.records:
        if r.get("ok") and "step" in r:
            steps[r["step"]] = max(steps.get(r["step"], 0.0), r.get("seconds", 0.0))
    details = {"seconds": round(elapsed, 3), "steps": steps, "status": job.status}
    if job.error:
        return Check(name, FAIL, f"the job could not start: {_one_line(job.error)}",
                     "fix the checks above (library, shmem-core), then run shmem-config --check again", details)
    if job.status == 124:
        return Check(name, FAIL, f"did not finish within {timeout:g} s (hung in "
                     f"{_last_step(job.records)})",
                     "check loopback TCP and firewall rules; rerun with SHMEM_LOG_LEVEL=DEBUG", details)
    if failures:
        pe, r = failures[0]
        details["output"] = job.output[-20:]
        return Check(name, FAIL, f"PE {pe} failed in step {r.get('step')}: {_one_line(r.get('error', ''))}",
                     "rerun with SHMEM_LOG_LEVEL=DEBUG and look at the failing step", details)
    if job.status != 0 or len(done) != npes:
        details["output"] = job.output[-20:]
        tail = _one_line(job.output[-1]) if job.output else "no output"
        return Check(name, FAIL, f"the job ended with status {job.status} ({len(done)} of {npes} PEs finished): {tail}",
                     "rerun with SHMEM_LOG_LEVEL=DEBUG", details)
    return Check(name, PASS,
                 f"init, put, get, put_signal + wait, barrier, finalize on {npes} PEs in {elapsed:.2f} s "
                 f"(limit {timeout:g} s)", details=details)


def _last_step(records):
    for _pe, r in reversed(records):
        if "step" in r:
            return f"the step after {r['step']}"
    return "init"


def _one_line(text):
    text = " ".join(str(text).split())
    return text if len(text) <= 300 else text[:297] + "..."


def run_all(selftest=True, timeout=SELFTEST_TIMEOUT):
    """Runs every check; returns the list of Checks."""
    installation, _ = _install.find_installation()
    runtime = _install.runtime_library()
    packages = _install.all_packages()
    checks = [
        check_library(runtime),
        check_abi(runtime, installation),
        check_packages(packages, runtime),
        check_duplicates(runtime),
        check_memfd(),
        check_nofile(),
        check_memlock(),
        check_loopback(),
        check_ports(),
        check_openssl(),
        check_ucx_plugin(runtime),
    ]
    if selftest:
        checks.append(check_selftest(runtime, timeout=timeout))
    return checks
