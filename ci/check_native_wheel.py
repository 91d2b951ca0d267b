"""Checks a repaired shmem-native wheel (ci/wheels.sh runs it after `auditwheel repair`).

    python ci/check_native_wheel.py dist/shmem_native-<version>-py3-none-manylinux_*.whl

What a user of the wheel relies on:

1. Its tag is py3-none-manylinux_*: it holds no Python extension, so it installs on every
   Python 3, on every Linux whose glibc is at least the tag's.
2. `auditwheel show` finds nothing outside the manylinux policy in libaclshmem: OpenSSL is
   grafted into the wheel (shmem_native.libs/) and libaclshmem's NEEDED names the copies.
3. The UCX plug-in, when the wheel has one, is the only file that needs libraries outside
   the policy, and those are UCX's own: it links the system's UCX, which the repair left
   out on purpose (libaclshmem loads the plug-in only for jobs that span nodes, so the
   wheel works on a machine without UCX).  Plain `auditwheel show` therefore reports the
   whole wheel as linux_*; this script shows that the wheel without the plug-in is clean.

Exits non-zero, saying what is wrong, when a check fails; needs auditwheel (and its
pyelftools) in the running Python.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

PLUGIN = "libaclshmem_ucx.so"
LIBRARY = "libaclshmem.so"
# UCX's libraries and what they link themselves (libnuma, for libucs).
UCX_LIBS = re.compile(r"^lib(ucp|ucs|uct|ucm|numa)\.so\.\d+$")
# The basic system libraries every manylinux policy allows.
BASE_LIBS = re.compile(r"^(libc|libm|libdl|libpthread|librt)\.so\.\d+$|^ld-linux.*\.so\.\d+$")


def fail(message):
    print(f"check_native_wheel: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def auditwheel_show(path):
    """auditwheel's verdict on a wheel: its JSON report."""
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "show", "--json", path],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        fail(f"auditwheel show {path}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def needed(data):
    """DT_NEEDED of an ELF file given as bytes."""
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        elf = ELFFile(f)
        return [tag.needed for section in elf.iter_sections() if isinstance(section, DynamicSection)
                for tag in section.iter_tags() if tag.entry.d_tag == "DT_NEEDED"]


def without(path, member, folder):
    """A copy of the wheel without one file (and its RECORD line)."""
    out = os.path.join(folder, os.path.basename(path))
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            if item.filename == member:
                continue
            data = src.read(item)
            if item.filename.endswith(".dist-info/RECORD"):
                data = b"".join(line for line in data.splitlines(keepends=True)
                                if not line.startswith(member.encode() + b","))
            dst.writestr(item, data)
    return out


def main(path):
    name = os.path.basename(path)
    m = re.fullmatch(r"shmem_native-[^-]+-py3-none-(manylinux_\d+_\d+_[a-z0-9_]+)\.whl", name)
    if not m:
        fail(f"{name}: the tag is not py3-none-manylinux_*")
    platform = m.group(1)
    with zipfile.ZipFile(path) as whl:
        files = {os.path.basename(n): n for n in whl.namelist()}
        for wanted in (LIBRARY,):
            if wanted not in files:
                fail(f"{name} has no {wanted}")
        lib_needed = needed(whl.read(files[LIBRARY]))
        grafted = [n for n in whl.namelist() if n.startswith("shmem_native.libs/") and not n.endswith("/")]
        plugin_needed = needed(whl.read(files[PLUGIN])) if PLUGIN in files else None

    # OpenSSL travels with the wheel: libaclshmem needs the grafted copies, not the system's.
    for lib in ("libssl", "libcrypto"):
        copies = [os.path.basename(g) for g in grafted if os.path.basename(g).startswith(lib + "-")]
        if not copies or copies[0] not in lib_needed:
            fail(f"{LIBRARY} does not link a grafted {lib} (NEEDED {lib_needed}, grafted {grafted})")

    report = auditwheel_show(path)
    print(f"auditwheel show: {name}: overall {report['overall_tag']}, symbols {report['sym_tag']}, "
          f"external libraries {sorted(report['external_libs']) or 'none'}")
    if report["sym_tag"] != platform:
        fail(f"the symbol versions allow {report['sym_tag']}, the file is tagged {platform}")

    if plugin_needed is None:
        if report["overall_tag"] != platform:
            fail(f"auditwheel show: {report['overall_tag']}, not {platform}: {report['external_libs']}")
        print(f"check_native_wheel: {name}: clean (no UCX plug-in in this build)")
        return

    outside = [lib for lib in plugin_needed if not BASE_LIBS.match(lib) and not UCX_LIBS.match(lib)]
    if outside:
        fail(f"{PLUGIN} needs libraries that are neither UCX's nor the system's base: {outside}")
    stray = [lib for lib in report["external_libs"] if not UCX_LIBS.match(lib)]
    if stray:
        fail(f"libraries outside the policy that are not UCX's: {stray}")
    with tempfile.TemporaryDirectory() as tmp:
        bare = auditwheel_show(without(path, files[PLUGIN], tmp))
    if bare["overall_tag"] != platform or bare["external_libs"]:
        fail(f"without {PLUGIN}, auditwheel show gives {bare['overall_tag']} "
             f"(external {bare['external_libs']}), not {platform}")
    print(f"check_native_wheel: {name}: clean apart from {PLUGIN}, which links the system's UCX "
          f"({', '.join(lib for lib in plugin_needed if UCX_LIBS.match(lib))}); "
          f"OpenSSL is grafted ({', '.join(os.path.basename(g) for g in grafted)})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
