"""The shell commands of README.md and docs/quickstart.rst work as written.

Every shell block of the two documents carries a marker just before it that says what
this test does with it:

* README.md: ``<!-- verbatim-test: run -->``, ``<!-- verbatim-test: run in DIR -->`` or
  ``<!-- verbatim-test: skip: REASON -->`` (an HTML comment, invisible when rendered);
* docs/quickstart.rst: the same words in an rst comment, ``.. verbatim-test: run in DIR``
  (continuation lines indented), before the ``.. code-block:: console``.

A block without a marker fails the test, so a new command cannot slip in untested; a
skip must say why (needs root, another machine, a multi-gigabyte download, or it is
``ci/test.sh``, which runs this test).

The blocks marked ``run`` are run in one bash session, in document order (the README,
then the quick start, as a new user reads them), in a copy of the checkout's files (those
git knows: a fresh clone plus uncommitted work), with a fresh venv active and nothing of
this test's environment leaking in (no PYTHONPATH, ACLSHMEM_*/SHMEM_*/CI_* variables or
other venv on PATH).  Each command line's exit status is checked, and the first that
fails stops the session: the test then shows the block, where it is, and its output.
Nothing is replaced or faked: the packages are built from the copy (pip's own cache
spares repeated downloads) and the jobs run real PEs.  Needs pip's package index (the
build requirements of the packages, NumPy) and what ci/demo.sh needs (Debian's build
packages, already installed by ci/test.sh).  About two minutes.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

from integration_helpers import REPO

DOCUMENTS = ["README.md", os.path.join("docs", "quickstart.rst")]
SHELL_LANGUAGES = {"console", "bash", "sh", "shell", "shell-session"}
MARKER = re.compile(r"verbatim-test:\s*(?P<action>run|skip)\b(?P<rest>.*)", re.S)
SESSION_TIMEOUT = 900


class Block:
    """One shell block: where it is, its command lines, and its marker."""

    def __init__(self, doc, line, commands, marker):
        self.doc, self.line, self.commands, self.marker = doc, line, commands, marker

    def where(self):
        return f"{self.doc}:{self.line}"

    def action(self):
        """('run', directory) or ('skip', reason); raises ValueError for a bad marker."""
        match = MARKER.search(self.marker or "")
        if not match:
            raise ValueError(f"{self.where()}: no 'verbatim-test: run|skip' marker before the block")
        rest = " ".join(match.group("rest").split()).removesuffix("-->").strip()
        if match.group("action") == "skip":
            reason = rest.lstrip(":").strip()
            if not reason:
                raise ValueError(f"{self.where()}: a skip must say why ('verbatim-test: skip: REASON')")
            return "skip", reason
        if rest and not rest.startswith("in "):
            raise ValueError(f"{self.where()}: expected 'run' or 'run in DIR', got {rest!r}")
        return "run", rest[3:].strip() if rest else "."


def _join_continuations(lines):
    """Joins lines that end with a backslash to the next one."""
    out, pending = [], ""
    for line in lines:
        if line.endswith("\\"):
            pending += line[:-1] + " "
        else:
            out.append(pending + line)
            pending = ""
    if pending:
        out.append(pending)
    return out


def _previous_text(lines, index):
    """The paragraph just before lines[index], skipping blank lines (a marker)."""
    j = index - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    end = j
    while j >= 0 and lines[j].strip():
        j -= 1
    return "\n".join(lines[j + 1:end + 1])


def _html_comment(lines, index):
    """The HTML comment just before lines[index], or ''."""
    text = _previous_text(lines, index).strip()
    return text if text.startswith("<!--") and text.endswith("-->") else ""


def markdown_blocks(doc, text):
    """The indented (4 spaces, after a blank line) and fenced shell blocks of Markdown."""
    lines, blocks, i = text.splitlines(), [], 0
    while i < len(lines):
        fence = re.match(r"^(```|~~~)\s*(\w*)", lines[i])
        if fence:
            end = next((k for k in range(i + 1, len(lines)) if lines[k].startswith(fence.group(1))), len(lines))
            if fence.group(2) in SHELL_LANGUAGES | {""}:
                body = [ln for ln in lines[i + 1:end] if ln.strip()]
                blocks.append(Block(doc, i + 1, _join_continuations(body), _html_comment(lines, i)))
            i = end + 1
        elif lines[i].startswith("    ") and lines[i].strip() and (i == 0 or not lines[i - 1].strip()):
            start = i
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                i += 1
            body = [ln[4:] for ln in lines[start:i] if ln.strip()]
            blocks.append(Block(doc, start + 1, _join_continuations(body), _html_comment(lines, start)))
        else:
            i += 1
    return blocks


def rst_blocks(doc, text):
    """The ``code-block`` directives of a shell language; console blocks: the ``$`` lines."""
    lines, blocks = text.splitlines(), []
    for i, line in enumerate(lines):
        match = re.match(r"^(\s*)\.\. (?:code-block|code|sourcecode)::\s*(\S+)\s*$", line)
        if not match or match.group(2) not in SHELL_LANGUAGES:
            continue
        indent = len(match.group(1))
        body = []
        for ln in lines[i + 1:]:
            if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
                break
            if ln.strip() and not re.match(r"^\s*:[\w-]+:", ln):
                body.append(ln.strip())
        if match.group(2) == "console":
            body = [ln[2:] for ln in _join_console(body)]
        marker = _previous_text(lines, i)
        blocks.append(Block(doc, i + 1, _join_continuations(body), marker if marker.lstrip().startswith("..") else ""))
    return blocks


def _join_console(lines):
    """The prompt lines of a console block, with their continuation lines (output dropped)."""
    out, continuing = [], False
    for ln in lines:
        if ln.startswith("$ ") or continuing:
            out.append(ln if not continuing else "$ " + ln)
            continuing = ln.endswith("\\")
    # A continuation line is glued back by _join_continuations after the prompt is cut.
    return out


def all_blocks():
    blocks = []
    for doc in DOCUMENTS:
        with open(os.path.join(REPO, doc), encoding="utf-8") as f:
            text = f.read()
        blocks += markdown_blocks(doc, text) if doc.endswith(".md") else rst_blocks(doc, text)
    return blocks


def test_every_shell_block_is_marked_run_or_skip_with_a_reason():
    blocks = all_blocks()
    assert len(blocks) >= 8, [b.where() for b in blocks]  # the parsers still see the blocks
    problems = []
    for block in blocks:
        try:
            block.action()
        except ValueError as e:
            problems.append(f"{e}\n{textwrap.indent(chr(10).join(block.commands), '    ')}")
    assert not problems, "\n".join(problems)
    assert any(b.action()[0] == "run" for b in blocks if b.doc == "README.md")


def _copy_checkout(dest):
    """Copies the files git knows (tracked, and untracked but not ignored) to dest."""
    listing = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "-co", "--exclude-standard"],
                             stdout=subprocess.PIPE, check=True).stdout.decode()
    for rel in filter(None, listing.split("\0")):
        src = os.path.join(REPO, rel)
        if os.path.isfile(src):  # a deleted but still tracked file is not there
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(dest, rel), follow_symlinks=False)


def _fresh_environment(venv):
    """This process's environment without what would leak into a new user's shell, and
    the fresh venv active (as `. venv/bin/activate` leaves it)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHON")
           and not k.startswith(("ACLSHMEM_", "SHMEM_", "CI_", "MESON"))}
    ours = os.path.join(sys.prefix, "bin") if sys.prefix != sys.base_prefix else None
    path = [p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p and p != ours]
    env["PATH"] = os.pathsep.join([os.path.join(venv, "bin")] + path)
    env["VIRTUAL_ENV"] = venv
    return env


def _session_script(blocks, copy, state):
    """A bash script that runs the blocks' command lines in order, each block's output in
    state/block-N.log, stopping at the first command that fails."""
    parts = []
    for n, block in enumerate(blocks):
        parts.append(f"echo {n} > {_quote(os.path.join(state, 'current'))}")
        parts.append(f"exec > {_quote(os.path.join(state, f'block-{n}.log'))} 2>&1")
        parts.append(f"cd {_quote(os.path.join(copy, block.action()[1]))} || exit 1")
        for command in block.commands:
            parts.append(command)
            parts.append('__status=$?; [ "$__status" -eq 0 ] || { echo "[exit status $__status]"; exit 1; }')
    parts.append(f"echo done > {_quote(os.path.join(state, 'current'))}")
    return "\n".join(parts) + "\n"


def _quote(path):
    return "'" + path.replace("'", "'\\''") + "'"


def test_readme_and_quickstart_commands_run_as_written(tmp_path):
    blocks = [b for b in all_blocks() if b.action()[0] == "run"]
    copy, state, venv = str(tmp_path / "checkout"), str(tmp_path / "state"), str(tmp_path / "venv")
    os.makedirs(state)
    _copy_checkout(copy)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    script = os.path.join(state, "session.sh")
    with open(script, "w", encoding="utf-8") as f:
        f.write(_session_script(blocks, copy, state))
    proc = subprocess.Popen(["bash", script], env=_fresh_environment(venv), cwd=copy,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=SESSION_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    with open(os.path.join(state, "current"), encoding="utf-8") as f:
        current = f.read().strip()
    if current != "done":
        _fail_with_block(blocks[int(current)], os.path.join(state, f"block-{current}.log"), proc.returncode)
    assert proc.returncode == 0, f"the session ended with status {proc.returncode} after every block"


def _fail_with_block(block, log, status):
    with open(log, encoding="utf-8", errors="replace") as f:
        output = f.read().splitlines()
    if len(output) > 200:
        output = [f"... ({len(output) - 200} lines before)"] + output[-200:]
    reason = "timed out" if status == -signal.SIGKILL else "failed"
    pytest.fail(f"the block at {block.where()} {reason} (run in {block.action()[1]}):\n"
                + textwrap.indent("\n".join(block.commands), "    ")
                + "\n--- its output\n" + "\n".join(output), pytrace=False)
