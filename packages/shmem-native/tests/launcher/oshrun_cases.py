#!/usr/bin/env python3
"""aclshmemcc (oshcc) and aclshmemrun (oshrun) of the build tree, as a C-only user runs them
(issue #24).  Run by `meson test oshrun` (tests/launcher/meson.build):

    oshrun_cases.py --cc BUILD/programs/aclshmemcc --run BUILD/programs/aclshmemrun \\
                   --source tests/launcher/osh_launched.c --repo REPO [--sanitized]
                   [unittest options]

The wrapper builds osh_launched.c (an OpenSHMEM program, shmem.h) and a C++ program; the
launcher runs them on 2, 3 and 4 PEs: output prefixes, the environment of shmem_init(),
--bind-to, exit statuses, fail-fast, SIGINT/SIGTERM passed on, --timeout, long lines, bad command
lines, a Python script (when cffi is importable), and a 2-node job handed to shmem-core's
launcher.  Without a launcher the program is a job of 1 PE.  Only the standard library is
needed (no pytest): meson's own Python runs it.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

ARGS = None  # the paths given on the command line
JOB_VARIABLES = ("SHMEM_RUN_UID", "SHMEM_RUN_PE", "SHMEM_RUN_NPES", "SHMEM_RUN_MEM_SIZE", "SHMEM_SYMMETRIC_SIZE",
                 "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                 "SHMEM_JOB_SECRET", "CC", "CXX", "SHMEM_CC", "SHMEM_CXX")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in JOB_VARIABLES}
    env.update(extra)
    return env


def run(command, timeout=120, env=None, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=clean_env() if env is None else env, **kwargs)


def alive(pid):
    """Whether process pid runs (a zombie that nobody reaped yet has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


class Tools(unittest.TestCase):
    """Builds osh_launched once, with the wrapper under its OpenSHMEM name."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test_oshrun_")
        cls.oshcc = cls.link("oshcc", ARGS.cc)
        cls.oshcxx = cls.link("oshc++", ARGS.cc)
        cls.oshrun = cls.link("oshrun", ARGS.run)
        cls.prog = os.path.join(cls.tmp, "osh_launched")
        built = run([cls.oshcc, "-O2", "-Wall", "-Wextra", "-Werror", ARGS.source, "-o", cls.prog])
        assert built.returncode == 0, built.stdout + built.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def link(cls, name, target):
        path = os.path.join(cls.tmp, name)
        os.symlink(os.path.abspath(target), path)
        return path

    def launch(self, args, timeout=120, env=None):
        return run([self.oshrun] + args, timeout=timeout, env=env)


class CompilerWrapper(Tools):
    def test_showme_prints_the_command_with_the_build_trees_paths(self):
        out = run([self.oshcc, "-showme", "prog.c", "-o", "prog"]).stdout.split()
        include = os.path.join(ARGS.repo, "packages", "shmem-native", "include")
        self.assertEqual(out[0], run([self.oshcc, "-showme:command"]).stdout.split()[0])
        self.assertIn(f"-I{include}", out)
        self.assertEqual(out[out.index("prog.c"):out.index("prog.c") + 3], ["prog.c", "-o", "prog"])
        self.assertIn("-laclshmem", out)
        self.assertGreater(out.index("-laclshmem"), out.index("prog.c"))  # libraries after the sources
        self.assertEqual(run([self.oshcc, "-showme:incdirs"]).stdout.split(), [include])
        self.assertEqual(run([self.oshcc, "-showme:libs"]).stdout.split(), ["aclshmem"])
        libdir = run([self.oshcc, "-showme:libdirs"]).stdout.split()
        self.assertTrue(os.path.isfile(os.path.join(libdir[0], "libaclshmem.so")), libdir)
        self.assertIn(f"-Wl,-rpath,{libdir[0]}", run([self.oshcc, "--showme:link"]).stdout.split())
        compile_flags = run([self.oshcc, "-showme:compile"]).stdout.split()
        self.assertIn(f"-I{include}", compile_flags)  # and, in a sanitizer build, its -fsanitize=...
        self.assertTrue(all(f == f"-I{include}" or f.startswith("-fsanitize=") for f in compile_flags))
        self.assertIn("(Language: C)", run([self.oshcc, "-showme:version"]).stdout)
        self.assertIn("(Language: C++)", run([self.oshcxx, "-showme:version"]).stdout)
        self.assertIn("-showme", run([self.oshcc, "-showme:help"]).stdout)
        bad = run([self.oshcc, "-showme:nothing"])
        self.assertEqual(bad.returncode, 2)
        self.assertIn("unknown option -showme:nothing", bad.stderr)

    def test_compiling_only_leaves_the_link_flags_out(self):
        for flag in ("-c", "-S", "-E", "-M", "-MM"):
            out = run([self.oshcc, "-showme", flag, "prog.c"]).stdout
            self.assertNotIn("-laclshmem", out, flag)
            self.assertIn("-I", out)

    def test_the_compiler_comes_from_shmem_cc_then_cc_but_never_a_wrapper(self):
        def command(**variables):
            return run([self.oshcc, "-showme:command"], env=clean_env(**variables)).stdout.strip()

        default = command()
        self.assertEqual(command(CC="gcc -DFROM_CC"), "gcc -DFROM_CC")
        self.assertEqual(command(CC="gcc", SHMEM_CC="clang"), "clang")
        self.assertEqual(command(CC=self.oshcc), default)  # make CC=oshcc must not loop forever
        self.assertEqual(command(CC="/usr/bin/shmemcc -O2"), default)
        self.assertEqual(run([self.oshcxx, "-showme:command"], env=clean_env(CXX="g++ -DX")).stdout.strip(),
                         "g++ -DX")
        # ... and really is the compiler that runs
        fake = os.path.join(self.tmp, "fake-cc")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho fake-cc \"$@\"\n")
        os.chmod(fake, 0o755)
        out = run([self.oshcc, "x.c"], env=clean_env(CC=fake)).stdout
        self.assertTrue(out.startswith("fake-cc ") and "-I" in out and "x.c" in out and "-laclshmem" in out, out)

    def test_a_cxx_program_builds_with_oshcxx_and_runs_alone(self):
        source = os.path.join(self.tmp, "hello.cc")
        with open(source, "w") as f:
            f.write(textwrap.dedent("""\
                #include <shmem.h>
                #include <cstdio>
                int main() {
                    shmem_init();
                    std::printf("c++ %d of %d\\n", shmem_my_pe(), shmem_n_pes());
                    shmem_finalize();
                    return 0;
                }
            """))
        exe = os.path.join(self.tmp, "hello_cxx")
        built = run([self.oshcxx, "-Wall", source, "-o", exe])
        self.assertEqual(built.returncode, 0, built.stderr)
        self.assertEqual(run([exe]).stdout, "c++ 0 of 1\n")


class Launcher(Tools):
    def test_ring_on_2_and_4_pes_with_prefixed_output(self):
        for n in (2, 4):
            r = self.launch(["-np", str(n), self.prog, "ring"])
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(sorted(r.stdout.splitlines()),
                             [f"[PE {pe}] ring {pe} of {n} got {(pe - 1) % n}" for pe in range(n)])
            self.assertEqual(sorted(r.stderr.splitlines()), [f"[PE {pe}] stderr {pe}" for pe in range(n)])

    def test_the_readmes_example(self):
        """README: oshcc examples/openshmem/ring.c -o ring && oshrun -np 4 ./ring"""
        exe = os.path.join(self.tmp, "ring")
        built = run([self.oshcc, os.path.join(ARGS.repo, "examples", "openshmem", "ring.c"), "-o", exe])
        self.assertEqual(built.returncode, 0, built.stderr)
        r = self.launch(["-np", "4", exe])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(r.stdout.splitlines()),
                         [f"[PE {pe}] PE {pe} of 4: PE {(pe - 1) % 4} sent me {(pe - 1) % 4}" for pe in range(4)])
        self.assertEqual(run([exe]).stdout, "PE 0 of 1: PE 0 sent me 0\n")

    def test_more_pes_than_the_launcher_forks_ahead(self):
        """The launcher forks up to 32 PEs before it checks that the first one's exec worked:
        a ring of 40 PEs runs, and a program that cannot start is reported once, for PE 0."""
        r = self.launch(["-np", "40", self.prog, "ring"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(r.stdout.splitlines()),
                         sorted(f"[PE {pe:>2}] ring {pe} of 40 got {(pe - 1) % 40}" for pe in range(40)))
        r = self.launch(["-np", "40", os.path.join(self.tmp, "missing")])
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.count("cannot start PE"), 1, r.stderr)
        self.assertIn("cannot start PE 0", r.stderr)

    def test_no_prefix_and_wide_pe_numbers(self):
        r = self.launch(["-n", "2", "--no-prefix", self.prog, "ring"])
        self.assertEqual(sorted(r.stdout.splitlines()), ["ring 0 of 2 got 1", "ring 1 of 2 got 0"])
        r = self.launch(["--npes", "11", self.prog, "env"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("[PE  3] SHMEM_RUN_PE=3", r.stdout)
        self.assertIn("[PE 10] SHMEM_RUN_PE=10", r.stdout)

    def cpus_of_pes(self, r, npes):
        """{pe: [cpus]} from the output of `osh_launched cpus`, whose ring must have passed."""
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        seen = {}
        for line in r.stdout.splitlines():
            head, _, rest = line.partition("] cpus ")
            pe, _, listed = rest.partition(" ok:")
            self.assertTrue(listed, line)
            seen[int(pe)] = [int(c) for c in listed.split()]
        self.assertEqual(sorted(seen), list(range(npes)), r.stdout)
        return seen

    def test_bind_to_core_gives_each_pe_one_cpu_in_turn(self):
        allowed = sorted(os.sched_getaffinity(0))
        npes = len(allowed) + 1  # the last PE shares the first CPU
        r = self.launch(["-np", str(npes), "--bind-to", "core", self.prog, "cpus"])
        self.assertEqual(self.cpus_of_pes(r, npes), {pe: [allowed[pe % len(allowed)]] for pe in range(npes)})
        for args in ([], ["--bind-to", "none"]):  # unbound, the default
            r = self.launch(["-np", "2", *args, self.prog, "cpus"])
            self.assertEqual(self.cpus_of_pes(r, 2), {0: allowed, 1: allowed})

    def variables(self, text):
        """{pe: {name: value}} from the output of `osh_launched env`."""
        out = {}
        for line in text.splitlines():
            tag, _, rest = line.partition("] ")
            name, sep, value = rest.partition("=")
            if sep:
                out.setdefault(int(tag[len("[PE "):]), {})[name] = value
        return out

    def test_the_environment_of_shmem_init(self):
        r = self.launch(["-np", "3", "--mem-size", "1.5G", self.prog, "env"])
        self.assertEqual(r.returncode, 0, r.stderr)
        seen = self.variables(r.stdout)
        self.assertEqual(sorted(seen), [0, 1, 2])
        for pe, v in seen.items():
            self.assertEqual((v["SHMEM_RUN_PE"], v["SHMEM_RUN_NPES"], v["SHMEM_RUN_MEM_SIZE"]),
                             (str(pe), "3", str(3 << 29)))
            self.assertEqual((v["RANK"], v["WORLD_SIZE"], v["LOCAL_RANK"], v["LOCAL_WORLD_SIZE"]),
                             (str(pe), "3", str(pe), "3"))
            self.assertEqual((v["MASTER_ADDR"], v["PYTHONUNBUFFERED"]), ("127.0.0.1", "1"))
            self.assertEqual(v["MASTER_PORT"], seen[0]["MASTER_PORT"])
        self.assertEqual(r.stdout.count("uid digits 272, secret digits 64"), 3)
        secrets = {line.split()[-1] for line in r.stdout.splitlines() if "] secret " in line}
        self.assertEqual(len(secrets), 1)  # one fresh job secret for the whole job
        # The user's own secret and torchrun variables are kept.
        r = self.launch(["-np", "2", self.prog, "env"],
                        env=clean_env(SHMEM_JOB_SECRET="mine-12345", RANK="7", SHMEM_RUN_MEM_SIZE="64M"))
        seen = self.variables(r.stdout)
        self.assertEqual([seen[pe]["RANK"] for pe in (0, 1)], ["7", "7"])
        self.assertEqual(seen[1]["WORLD_SIZE"], "(unset)")
        self.assertEqual(seen[1]["SHMEM_RUN_MEM_SIZE"], "64M")
        self.assertIn("[PE 1] secret mine-123", r.stdout)

    def test_the_first_failure_stops_the_job_and_gives_its_status(self):
        t0 = time.monotonic()
        r = self.launch(["-n", "3", "--kill-grace", "1", self.prog, "fail", "1", "3"], timeout=60)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertLess(time.monotonic() - t0, 20)
        self.assertIn("oshrun: PE 1 exited with status 3; stopping the other PEs", r.stderr)
        self.assertNotIn("not stopped", r.stdout)

    def test_a_pe_killed_by_a_signal(self):
        script = 'if [ "$SHMEM_RUN_PE" = 0 ]; then kill -KILL $$; fi; sleep 60'
        r = self.launch(["-n", "2", "--kill-grace", "1", "sh", "-c", script], timeout=60)
        self.assertEqual(r.returncode, 128 + signal.SIGKILL, r.stderr)
        self.assertIn(f"PE 0 exited with status {128 + signal.SIGKILL}", r.stderr)

    def test_a_pe_that_ignores_sigterm_is_killed_after_the_grace(self):
        script = 'trap "" TERM; [ "$SHMEM_RUN_PE" = 1 ] && exit 4; sleep 60'
        t0 = time.monotonic()
        r = self.launch(["-n", "2", "--kill-grace", "1", "sh", "-c", script], timeout=60)
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertLess(time.monotonic() - t0, 20)

    def test_timeout(self):
        r = self.launch(["-n", "2", "--timeout", "1", "--kill-grace", "1", self.prog, "fail", "9", "0"], timeout=60)
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertIn("timeout after 1 s, stopping the job", r.stderr)

    def test_sigint_and_sigterm_are_passed_on_to_every_pe(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            p = subprocess.Popen([self.oshrun, "-np", "2", self.prog, "signals"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=clean_env())
            try:
                lines = []
                deadline = time.monotonic() + 60
                while sum("ready" in line for line in lines) < 2 and time.monotonic() < deadline:
                    lines.append(p.stdout.readline())
                p.send_signal(sig)
                out, err = p.communicate(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            text = "".join(lines) + out
            self.assertEqual(text.count(f"got {sig.name}"), 2, text + err)
            self.assertEqual(p.returncode, 128 + sig)

    def test_no_pe_outlives_a_launcher_killed_by_sigkill(self):
        p = subprocess.Popen([self.oshrun, "-np", "2", self.prog, "signals"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=clean_env())
        try:
            for _ in range(2):
                self.assertIn("ready", p.stdout.readline())
            pes = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
            self.assertEqual(len(pes), 2, pes)
            p.kill()
            p.wait(timeout=30)
            deadline = time.monotonic() + 30
            while any(map(alive, pes)) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertFalse([pe for pe in pes if alive(pe)])
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()

    def test_long_lines_and_a_last_line_without_newline(self):
        r = self.launch(["-n", "2", self.prog, "lines"])
        lines = r.stdout.split("\n")
        self.assertEqual(lines[-1], "")  # every line ends with a newline
        for pe in (0, 1):
            self.assertIn(f"[PE {pe}] " + "x" * 200000, lines)
            self.assertIn(f"[PE {pe}] no newline at the end", lines)

    def test_bad_command_lines(self):
        for args, says in ((["-n", "0", self.prog], "-n must be at least 1"),
                           (["-n", "2"], "name a program"),
                           (["-n", "2", "--mem-size", "lots", self.prog], "--mem-size \"lots\" is not a size"),
                           (["-n", "2", "--bogus", self.prog], "unrecognized option"),
                           (["-n", "two", self.prog], "-n needs an integer"),
                           (["-n", "2", "--timeout", "-1", self.prog], "--timeout needs a number of seconds"),
                           (["-n", "2", "--bind-to", "socket", self.prog], "--bind-to must be none or core"),
                           (["-n", "2", "--nnodes", "2", "--node-rank", "2", self.prog], "--node-rank must be in 0..1"),
                           ([self.prog], "-n N is required")):
            r = self.launch(args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(says, r.stderr, args)
        r = self.launch(["-n", "2", os.path.join(self.tmp, "missing")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot start PE 0", r.stderr)
        self.assertIn("No such file or directory", r.stderr)
        self.assertEqual(self.launch(["--help"]).returncode, 0)
        self.assertIn("ACLSHMEM v", run([self.oshrun, "--version"]).stdout)

    def test_a_program_without_a_launcher_is_a_job_of_one_pe(self):
        r = run([self.prog, "alone"])
        self.assertEqual((r.returncode, r.stdout), (0, "alone 0 of 1 heap ok\n"), r.stderr)
        # ... and a wrong launcher variable is named
        r = run([self.prog, "alone"], env=clean_env(SHMEM_RUN_NPES="4"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("SHMEM_RUN_UID", r.stdout + r.stderr)


def python_with_shmem():
    """An environment in which sys.executable imports shmem (shmem-core of this checkout over
    this build's library), or the reason why there is none."""
    if ARGS.sanitized:
        return "the library is built with sanitizers, which Python cannot load"
    try:
        import cffi  # noqa: F401
    except ImportError:
        return "cffi is not importable: no shmem-core here"
    src = os.path.join(ARGS.repo, "packages", "shmem-core", "src")
    lib = os.path.join(os.path.dirname(os.path.abspath(ARGS.run)), "..", "src", "libaclshmem.so")
    return clean_env(PYTHONPATH=src, ACLSHMEM_LIBRARY=os.path.normpath(lib), SHMEM_PYTHON=sys.executable)


class WithPython(Tools):
    def setUp(self):
        self.env = python_with_shmem()
        if isinstance(self.env, str):
            self.skipTest(self.env)

    def test_a_python_script_through_oshrun(self):
        script = os.path.join(self.tmp, "ring.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent("""\
                import shmem.core as core
                core.init()                        # mem_size from oshrun --mem-size
                me, n = core.my_pe(), core.n_pes()
                box = core.calloc(1, 8)
                mine = core.buffer(8)
                mine.numpy("int64")[0] = me
                core.barrier_all()
                core.put(box, mine, (me + 1) % n, 0)
                core.synchronize(0)
                core.barrier_all()
                print("python", me, n, int(box.numpy("int64")[0]))
                core.barrier_all()
                core.free(mine)
                core.free(box)
                core.finalize()
            """))
        try:
            import numpy  # noqa: F401
        except ImportError:
            self.skipTest("numpy is not importable")
        r = self.launch(["-np", "2", "--mem-size", "8M", sys.executable, script], env=self.env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(sorted(r.stdout.splitlines()), ["[PE 0] python 0 2 1", "[PE 1] python 1 2 0"])
        r = self.launch(["-np", "2", "-m", "this"], env=self.env)  # -m: python -m
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("[PE 1] Beautiful is better than ugly.", r.stdout)

    def test_two_nodes_are_handed_to_shmem_cores_launcher(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(self.env, SHMEM_JOB_SECRET="test_oshrun two nodes")
        nodes = [subprocess.Popen([self.oshrun, "--nnodes", "2", "--node-rank", str(rank), "--master-addr",
                                   "127.0.0.1", "--master-port", str(port), "-np", "2", self.prog, "ring"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for rank in (0, 1)]
        outs = []
        for p in nodes:
            try:
                out, err = p.communicate(timeout=180)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            self.assertEqual(p.returncode, 0, out + err)
            outs += out.splitlines()
        self.assertEqual(sorted(outs), [f"[PE {pe}] ring {pe} of 4 got {(pe - 1) % 4}" for pe in range(4)])

    def test_several_nodes_without_shmem_core_say_what_is_missing(self):
        no_shmem = os.path.join(self.tmp, "python-without-shmem")
        with open(no_shmem, "w") as f:
            f.write(f"#!/bin/sh\nexec {sys.executable} -I -S \"$@\"\n")
        os.chmod(no_shmem, 0o755)
        args = ["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", "1", "-np", "1", self.prog]
        for python, says in ((no_shmem, "pip install shmem-core"),
                             (os.path.join(self.tmp, "no-such-python"), "cannot be run")):
            r = self.launch(args, env=clean_env(SHMEM_PYTHON=python, SHMEM_JOB_SECRET="x"))
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(says, r.stderr)
            self.assertIn("shmem-core", r.stderr)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--cc", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--sanitized", action="store_true", help="the build uses sanitizers")
    ARGS, rest = parser.parse_known_args()
    ARGS.repo = os.path.normpath(ARGS.repo)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
