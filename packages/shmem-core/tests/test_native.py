"""shmem._native: the cdef agrees with the C headers, every declared function is in the
library, structure layouts agree with the C compiler, and the library search order."""

import os
import re
import subprocess
import sys
import textwrap

import pytest
from pycparser import c_ast, c_generator, c_parser

from conftest import include_dir
from shmem import _abi, _abi_build, _ffi_build, _native

FAKE_HEADERS = _abi_build.FAKE_HEADERS
# What cffi knows by itself and the cdef therefore does not declare.
CDEF_PRELUDE = _abi_build.PRELUDE


def _compiler():
    try:
        return _abi_build.compiler()
    except RuntimeError as exc:
        pytest.fail(f"{exc} (the header check preprocesses aclshmem.h)")


@pytest.fixture(scope="module")
def header_ast(tmp_path_factory):
    inc = include_dir()
    assert inc, ("aclshmem.h not found: set ACLSHMEM_INCLUDE_DIR, install shmem-native, or run from "
                 "the repository")
    fake = tmp_path_factory.mktemp("fakeinc")
    for name, text in FAKE_HEADERS.items():
        (fake / name).write_text(text)
    cmd = [_compiler(), "-E", "-P", "-nostdinc", "-D__attribute__(x)=", "-I", str(fake), "-I", inc,
           os.path.join(inc, "aclshmem.h")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(cmd)} failed:\n{out.stderr}"
    return c_parser.CParser().parse(out.stdout, "aclshmem.h")


@pytest.fixture(scope="module")
def cdef_ast():
    text = re.sub(r"/\*.*?\*/", " ", _native.cdef_source(), flags=re.S)  # cffi drops comments too
    return c_parser.CParser().parse(CDEF_PRELUDE + text, "cdef")


_GEN = c_generator.CGenerator()


def _strip(node, top_param=False):
    """Removes names (and top-level qualifiers of parameters) from a type in place."""
    if isinstance(node, c_ast.TypeDecl):
        node.declname = None
        if top_param:
            node.quals = []
        _strip(node.type)
    elif isinstance(node, c_ast.PtrDecl):
        if top_param:
            node.quals = []
        _strip(node.type)
    elif isinstance(node, c_ast.ArrayDecl):
        _strip(node.type)
    elif isinstance(node, c_ast.FuncDecl):
        if node.args is not None:
            params = []
            for p in node.args.params:
                if isinstance(p, c_ast.Decl):
                    p.name = None
                    _strip(p.type, top_param=True)
                    params.append(p)
                elif isinstance(p, c_ast.Typename):
                    p.name = None
                    _strip(p.type, top_param=True)
                    params.append(p)
                else:
                    params.append(p)
            # (void) means no parameters
            if len(params) == 1 and _GEN.visit(params[0]).strip() == "void":
                params = []
            node.args.params = params
        _strip(node.type)


def _render(type_node):
    text = _GEN.visit(type_node)
    return " ".join(text.replace("_Bool", "bool").split())


def functions(ast):
    out = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            ftype = ext.type
            _strip(ftype)
            out[ext.name] = _render(ftype)
    return out


_eval = _abi_build._evaluate  # (the generator's: literals, enumerators, operators, casts)


def typedefs(ast):
    """{typedef name: description} with enum values evaluated and struct fields listed."""
    out = {}
    for ext in ast.ext:
        if not isinstance(ext, c_ast.Typedef):
            continue
        inner = ext.type.type if isinstance(ext.type, c_ast.TypeDecl) else None
        if isinstance(inner, c_ast.Enum):
            known, value, members = {}, -1, []
            for e in inner.values.enumerators:
                value = _eval(e.value, known) if e.value is not None else value + 1
                known[e.name] = value
                members.append((e.name, value))
            out[ext.name] = ("enum", tuple(members))
        elif isinstance(inner, c_ast.Struct):
            fields = []
            for d in inner.decls:
                name = d.name
                _strip(d.type)
                fields.append((name, _render(d.type)))
            out[ext.name] = ("struct", tuple(fields))
        else:
            _strip(ext.type)
            out[ext.name] = ("typedef", _render(ext.type))
    return out


PRELUDE_NAMES = {"size_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
                 "uint32_t", "uint64_t", "uintptr_t", "intptr_t", "bool"}


def test_every_header_function_is_in_the_cdef_with_the_same_signature(header_ast, cdef_ast):
    header = functions(header_ast)
    cdef = functions(cdef_ast)
    missing = sorted(set(header) - set(cdef))
    extra = sorted(set(cdef) - set(header))
    assert not missing, f"declared in aclshmem.h but not in the cdef: {missing}"
    assert not extra, f"in the cdef but not declared in aclshmem.h: {extra}"
    differ = {name: (cdef[name], header[name]) for name in header if header[name] != cdef[name]}
    assert not differ, "signatures differ (cdef, header):\n" + "\n".join(
        f"  {n}: {a}  !=  {b}" for n, (a, b) in sorted(differ.items()))
    assert len(header) > 300  # the generated families are in


def test_types_of_the_cdef_match_the_header(header_ast, cdef_ast):
    header = {k: v for k, v in typedefs(header_ast).items() if k not in PRELUDE_NAMES}
    cdef = {k: v for k, v in typedefs(cdef_ast).items() if k not in PRELUDE_NAMES}
    assert set(cdef) == set(header), (sorted(set(header) - set(cdef)), sorted(set(cdef) - set(header)))
    for name in header:
        assert cdef[name] == header[name], f"{name}: cdef {cdef[name]} != header {header[name]}"


def test_the_families_follow_the_type_tables():
    names = {f[0] for f in _ffi_build.declared_functions()}
    for tname, _ in _abi.RMA_TYPES:
        assert f"aclshmem_{tname}_iput" in names and f"aclshmem_{tname}_put_signal_nbi" in names
    for tname, _ in _abi.P2P_SYNC_TYPES:
        assert f"aclshmem_{tname}_test_some_vector" in names
    assert "aclshmem_double_wait_until" not in names  # double is not a p2p-sync type
    assert "aclshmem_half_wait_until" not in names and "aclshmem_bfloat16_put_signal" in names
    # The AMO tables: integers take every operation, floats no bitwise ones, half and
    # bfloat16 no compare_swap.
    for tname, _ in _abi.AMO_INT_TYPES:
        assert f"aclshmem_{tname}_atomic_fetch_xor" in names and f"aclshmem_{tname}_atomic_compare_swap" in names
    assert "aclshmem_double_atomic_compare_swap" in names and "aclshmem_float_atomic_inc" not in names
    assert "aclshmem_bfloat16_atomic_fetch_add" in names and "aclshmem_half_atomic_compare_swap" not in names
    assert len([n for n in names if "_atomic_" in n]) == 8 * 14 + 2 * 6 + 2 * 5 == len(_abi.ATOMICS)
    for bits in _abi.RMA_SIZES:
        assert f"aclshmem_iget{bits}" in names and f"aclshmem_put{bits}_signal" in names
    # No declaration is written out in the Python sources.
    for module in (_native, _ffi_build):
        src = open(module.__file__).read()
        assert "aclshmem_int32_put(" not in src and "aclshmem_put64(" not in src


def test_every_cdef_function_is_exported_by_the_library(cdef_ast, lib):
    _native.declare_collectives()  # (an FFI parsed at run time declares them at first use)
    missing = [name for name in functions(cdef_ast) if not hasattr(lib, name)]
    assert not missing, f"declared but not exported by {_native.library_path()}: {missing}"


def test_structure_layouts_agree_with_the_c_compiler(tmp_path):
    inc = include_dir()
    assert inc
    ffi = _native.get_ffi()
    checks = {
        "aclshmemx_uniqueid_t": ["version", "my_pe", "n_pes", "internal"],
        "aclshmemx_init_attr_t": ["my_pe", "n_pes", "ip_port", "local_mem_size", "option_attr", "comm_args",
                                  "instance_id"],
        "aclshmem_init_optional_attr_t": ["version", "data_op_engine_type", "shm_init_timeout",
                                          "shm_create_timeout", "control_operation_timeout", "sockFd"],
        "aclshmem_team_config_t": ["version", "num_contexts", "uniqueid", "padding"],
        "aclshmem_handle_t": ["team_id"],
        "aclshmem_instance_ctx": ["id", "instance"],
        "aclshmem_prof_pe_t": ["pe_id", "block_prof"],
        "aclshmemx_description_t": ["size", "version", "library_path", "initialized", "my_pe", "n_pes",
                                    "transports_available", "transports_in_use", "ucx"],
        "aclshmemx_plugin_info_t": ["status", "from_env", "abi", "expected_abi", "path", "name", "version",
                                    "reason", "data_plane_error", "data_plane"],
    }
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "aclshmem.h"', "int main(void) {"]
    expected = []
    for t, fields in checks.items():
        lines.append(f'printf("%zu\\n", sizeof({t}));')
        expected.append(ffi.sizeof(t))
        for f in fields:
            lines.append(f'printf("%zu\\n", offsetof({t}, {f}));')
            expected.append(ffi.offsetof(t, f))
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    r = subprocess.run([_compiler(), "-std=c11", "-I", inc, str(src), "-o", str(exe)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    assert got == expected
    assert ffi.sizeof("aclshmemx_uniqueid_t") == 136


def _load_in_subprocess(env_changes):
    env = dict(os.environ)
    env.pop("ACLSHMEM_LIBRARY", None)
    env.update(env_changes)
    code = textwrap.dedent("""
        import sys
        sys.modules['shmem_native'] = None   # as if the package were not installed
        from shmem import _abi, _abi_build, _ffi_build, _native
        try:
            _native.load()
        except _native.LibraryNotFoundError as e:
            print('ERROR', e)
        else:
            print('LOADED', _native.library_path())
    """)
    pkg_root = os.path.dirname(os.path.dirname(_native.__file__))
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    env["LD_LIBRARY_PATH"] = "/nonexistent"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/").stdout


def test_the_error_names_every_place_tried():
    out = _load_in_subprocess({})
    if out.startswith("LOADED"):
        pytest.xfail(f"libaclshmem.so.1 is installed system-wide ({out.strip()}): nothing to report")
    assert out.startswith("ERROR"), out
    assert "ACLSHMEM_LIBRARY" in out and "shmem_native" in out and "libaclshmem.so.1" in out
    assert "pip install shmem-native" in out


def test_a_bad_ACLSHMEM_LIBRARY_is_an_error_not_a_fallback(tmp_path):
    out = _load_in_subprocess({"ACLSHMEM_LIBRARY": str(tmp_path / "nope.so")})
    assert out.startswith("ERROR") and "nope.so" in out and "ACLSHMEM_LIBRARY" in out, out


def test_ACLSHMEM_LIBRARY_is_used(lib):
    path = _native.library_path()
    assert path
    if os.path.isfile(path):
        out = _load_in_subprocess({"ACLSHMEM_LIBRARY": path})
        assert out.strip() == f"LOADED {path}"


def test_importing_shmem_loads_nothing_native():
    code = ("import sys; sys.modules['shmem_native'] = None; import os; os.environ['ACLSHMEM_LIBRARY']='/nope.so';"
            "import shmem, shmem.core, shmem._pyshmem, shmem.testing, shmem.run;"
            "from shmem import _native; assert not _native.is_loaded(); "
            "print(shmem.aclshmem_malloc.__name__, shmem.core.buffer.__name__)")
    pkg_root = os.path.dirname(os.path.dirname(_native.__file__))
    env = dict(os.environ, PYTHONPATH=pkg_root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["aclshmem_malloc", "buffer"]
