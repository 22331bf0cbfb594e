"""One writer and one reader for every file jvmbridge touches (jvmbridge/trust/writer.py,
jvmbridge/trust/bounded.py): no other module opens, writes, moves or makes a file by its name, but
where ALLOWED says why it may. Read from the sources with `ast`, so a new door fails here first."""
from __future__ import annotations

import ast

from helpers import REPO

PACKAGE = REPO / "jvmbridge"
DOORS = {"trust/writer.py", "trust/bounded.py"}

# Calls that reach a file by its name: builtin open (but of a descriptor the doors gave), os.open,
# pathlib's reads, writes and open, folders made, files moved or copied, figures and zips saved.
_NAMED_CALLS = {"write_text", "write_bytes", "read_text", "read_bytes", "savefig", "mkdir", "makedirs", "ZipFile"}
_MODULE_CALLS = {("os", "open"), ("os", "rename"), ("os", "replace"), ("os", "mkdir"), ("os", "makedirs"),
                 ("shutil", "move"), ("shutil", "copy"), ("shutil", "copy2"), ("shutil", "copyfile")}
_DOOR_FUNCTIONS = {"open_for_writing", "create_private_file", "read_regular_file"}

_PROC = "the kernel's own file under /proc: never a FIFO or a device, bounded by the kernel"
_PRIVATE = "inside a folder private_folder or mkdtemp made, 0700 and only root's: no other user can place a link"
ALLOWED: dict[tuple[str, str], str] = {
    ("cli/__init__.py", "os.open"): "/dev/null for stdout, the kernel's",
    ("conductor/slices.py", "open"): _PROC + " (a thread's comm)",
    ("forks/measure.py", "open"): _PROC + " (schedstat)",
    ("host/machine.py", "open"): _PROC + " (/proc/stat); host/ sits beside trust/ and may not import it",
    ("platforms/cpuinfo.py", ".read_text"): _PROC + " (/proc/cpuinfo); platforms/ sits below trust/",
    ("jvm/process.py", ".read_bytes"): _PROC + " (a process's stat and status)",
    ("jvm/live.py", ".read_bytes"): _PROC + " (a JVM's cmdline)",
    ("jvm/live.py", "open"): _PROC + " (a JVM's maps, read a line at a time)",
    ("jvm/attach.py", ".read_text"): _PROC + " (a process's status)",
    ("jvm/attach.py", "os.open"): "a JVM's /tmp and socket by O_PATH|O_NOFOLLOW inside its root; the trigger file "
                                  "written by a child that became the JVM's user first",
    ("jvm/procroot.py", "os.open"): "the walk inside another process's root, one O_NOFOLLOW name at a time: the "
                                    "door for files there; what it opens is read by trust.bounded.read_open_file",
    ("forks/parent.py", "os.open"): "HotSpot's hsperfdata folder, O_PATH|O_NOFOLLOW, to remove a dead JVM's file",
    ("fleet/callback_plugins/jvmbridge_unchecked.py", ".mkdir"): "runs inside ansible-playbook, which may not "
                                                                  "import jvmbridge; " + _PRIVATE,
    ("fleet/callback_plugins/jvmbridge_unchecked.py", ".write_text"): "as above, " + _PRIVATE,
    ("render/plot.py", "os.open"): "the current folder, O_PATH, held to come back to once matplotlib is imported from /",
    ("render/plot.py", ".savefig"): "handed an open file or a StringIO alone (plot_runs, svg_of), never a name",
    ("trust/paths.py", ".mkdir"): "private_folder making jvmbridge's own folders 0700 after checking the folders above",
    ("trust/paths.py", "os.mkdir"): "jvmbridge's own folders made 0700, one name at a time inside a folder held open "
                                     "(dir_fd), each checked as it is found",
    ("trust/paths.py", "os.open"): "the walks by which the writer and the reader reach a file and the tree walk, "
                                   "one O_NOFOLLOW name at a time (O_PATH, or O_DIRECTORY read only)",
}


def _doors(source: str) -> list[str]:
    """Each call in ``source`` that reaches a file by its name, as ALLOWED names them."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            first = node.args[0] if node.args else None
            called = first.func if isinstance(first, ast.Call) else None
            name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", None)
            if name not in _DOOR_FUNCTIONS:  # open(open_for_writing(...)) wraps the door's descriptor
                found.append("open")
        elif isinstance(f, ast.Attribute):
            module = f.value.id if isinstance(f.value, ast.Name) else None
            if (module, f.attr) == ("zipfile", "ZipFile"):
                found += [] if _in_memory(node) else ["zipfile.ZipFile"]
            elif (module, f.attr) in _MODULE_CALLS:
                found.append(f"{module}.{f.attr}")
            elif f.attr in _NAMED_CALLS or (f.attr == "open" and module not in ("os", "io", "tarfile", "gzip")):
                found.append(f".{f.attr}")
    return found


def _in_memory(call: ast.Call) -> bool:
    """A zip made in an io.BytesIO given as the call's first argument (``built := io.BytesIO()``), no file."""
    first = call.args[0] if call.args else None
    made = first.value if isinstance(first, ast.NamedExpr) else first
    return (isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute) and made.func.attr == "BytesIO"
            and isinstance(made.func.value, ast.Name) and made.func.value.id == "io")


def test_no_module_but_the_writer_and_the_reader_opens_a_file_by_its_name():
    seen, unexplained = set(), []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module in DOORS:
            continue
        for door in _doors(path.read_text()):
            seen.add((module, door))
            if (module, door) not in ALLOWED:
                unexplained.append(f"{module}: {door}")
    assert unexplained == [], "files reached by name outside trust/writer.py and trust/bounded.py"
    assert set(ALLOWED) - seen == set(), "allowed doors that no longer exist: take them out"


def test_the_scan_sees_each_kind_of_door():
    assert _doors("open('x', 'w')\nopen(open_for_writing(p), 'w')\nos.open('x', 0)\np.write_text('')\n"
                  "f.savefig('x.png')\nshutil.move(a, b)\nPath('x').open()\nos.fdopen(fd)\nzipfile.ZipFile(p, 'w')\n"
                  "zipfile.ZipFile(b := io.BytesIO(), 'w')\n") == [
        "open", "os.open", ".write_text", ".savefig", "shutil.move", ".open", "zipfile.ZipFile"]
