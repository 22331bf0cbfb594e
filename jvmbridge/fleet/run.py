"""Run the fleet playbook with `ansible-playbook`, then record each host that gave no document."""
from __future__ import annotations

import codecs
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from jvmbridge.trust.bounded import read_regular_file
from jvmbridge.trust.launch import WORKING_FOLDER, environment, find_program, launch
from jvmbridge.trust.paths import NotTrusted, trusted_path
from jvmbridge.trust.writer import create_private_file

PLAYBOOK = Path(__file__).resolve().with_name("playbook.yml")
# The play names its own config, so nothing in the caller's folder or home configures Ansible.
SETTINGS = PLAYBOOK.with_name("ansible.cfg")
# Where the play's callback leaves why a host gave no document.
RESULTS = ".ansible-results"
# One host's message and stderr; past this the host is "failed" unread.
_NOTE_LIMIT = 1 << 20


class FleetError(RuntimeError):
    """Ansible is missing, or could not run the play at all."""


def run_playbook(inventory: str, ansible_args: tuple[str, ...], fetch_dir: Path, relay: Callable[[str], None],
                 wheel: Path | None = None, compare: bool = False) -> int:
    """``ansible-playbook`` on the fleet play, its output handed to ``relay`` as it comes; its exit code."""
    try:
        check_play_files(inventory, ansible_args, wheel)
        playbook = find_program("ansible-playbook", "ansible-playbook")
    except NotTrusted as e:
        raise FleetError(str(e)) from None
    if not playbook:
        raise FleetError("ansible-playbook not found: install Ansible (pip install ansible-core)")
    results = fetch_dir / RESULTS
    shutil.rmtree(results, ignore_errors=True)
    # In the launcher's cwd, not the caller's: the play's paths are absolute.
    # PYTHONUNBUFFERED: Ansible's lines through the pipe as they are printed, not in blocks at the end.
    env = environment({"JVMBRIDGE_FLEET_RESULTS": str(results.resolve()), "ANSIBLE_CONFIG": str(SETTINGS),
                       "PYTHONUNBUFFERED": "1"},
                      inherit=("SSH_AUTH_SOCK",))  # the user's SSH agent, for the keys that reach the hosts
    whole = inventory if "," in inventory else str(Path(inventory).resolve())  # "host1,host2," names hosts
    command = [str(playbook), "-i", whole, str(PLAYBOOK), "-e", f"jvmbridge_fetch_dir={fetch_dir.resolve()}",
               *(["-e", f"jvmbridge_wheel={wheel.resolve()}"] if wheel else []),
               *(["-e", "jvmbridge_run=compare"] if compare else []), *ansible_args]
    status = _relayed(command, env, relay)
    record_unchecked(fetch_dir, results)
    return status


def _relayed(command: list[str], env: dict[str, str], relay: Callable[[str], None]) -> int:
    """``command`` run with its output handed to ``relay`` as it comes, read in chunks (a host's
    endless line costs no memory); its exit code. Ansible prints what hosts said among it. Stopped
    (Ctrl-C, or a relay that failed), the play is ended too: it would run on, orphaned."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with launch(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as play:
        assert play.stdout is not None
        try:
            while chunk := os.read(play.stdout.fileno(), 65536):
                relay(decoder.decode(chunk))
            relay(decoder.decode(b"", final=True))
        except BaseException:
            play.terminate()
            try:
                play.wait(timeout=5)
            except subprocess.TimeoutExpired:
                play.kill()
            raise
    return play.returncode


# Options naming files Ansible reads as code or settings (inventories, @vars, module paths, vault
# password files, run when executable).
_FILE_OPTIONS = ("-i", "--inventory", "--inventory-file", "-e", "--extra-vars", "-M", "--module-path",
                 "--vault-password-file", "--vault-pass-file", "--vault-id", "--playbook-dir",
                 "--become-password-file", "--connection-password-file")


def check_play_files(inventory: str, ansible_args: tuple[str, ...], wheel: Path | None) -> None:
    """As root, NotTrusted where another user can change a file the play reads as code: the inventory
    (its ProxyCommand runs on the controller as root), group_vars/host_vars, option files, and the
    wheel run on every host. Relative paths from the play's folder, as Ansible takes them."""
    given = [] if "," in inventory else [("the inventory", os.path.abspath(inventory), True)]  # the caller's
    for what, path, inventory_like in [*given, *_named_files(ansible_args)]:
        whole = Path(WORKING_FOLDER, path)
        _trusted_play_file(what, whole, whole_tree=True)
        if inventory_like:  # who can change the folder beside it can add group_vars/ there
            beside = whole if whole.is_dir() else whole.parent
            for folder in (beside, beside / "group_vars", beside / "host_vars"):
                _trusted_play_file(what, folder, whole_tree=folder != beside)
    if wheel:
        _trusted_play_file("--wheel", wheel)


_SHORT_FILE_OPTIONS = ("-i", "-e", "-M")


def _named_files(ansible_args: tuple[str, ...]) -> list[tuple[str, str, bool]]:
    """(option, path, whether an inventory) for each file an option of ``ansible_args`` names."""
    named, words, index = [], list(ansible_args), 0
    while index < len(words):
        word = words[index]
        index += 1
        option, equals, value = word.partition("=")  # --extra-vars=@vars.yml
        if not word.startswith("--") and word[:2] in _SHORT_FILE_OPTIONS and len(word) > 2:  # -e@vars.yml
            option, equals, value = word[:2], "=", word[2:]
        if option not in _FILE_OPTIONS:
            continue
        if not equals:
            value, index = (words[index] if index < len(words) else ""), index + 1
        path = _file_in_value(option, value)
        if path:
            named.append((f"ansible-playbook {option}", path, option in _INVENTORY_OPTIONS))
    return named


_INVENTORY_OPTIONS = ("-i", "--inventory", "--inventory-file")


def _file_in_value(option: str, value: str) -> str:
    """The file that ``option`` of _FILE_OPTIONS names with ``value``; "" where it names none."""
    if option in ("-e", "--extra-vars"):
        if not value.startswith("@"):  # variables given inline, no file
            return ""
        value = value[1:]
    elif option == "--vault-id":
        value = value.rpartition("@")[2]  # LABEL@FILE
    if value == "prompt" or option in _INVENTORY_OPTIONS and "," in value:  # "host1,host2," names hosts
        return ""
    return value


def _trusted_play_file(what: str, path: Path, whole_tree: bool = False) -> None:
    try:
        trusted_path(path, what, whole_tree)
    except NotTrusted as e:
        raise NotTrusted(f"{e}; copy it where only root can change it") from None


def record_unchecked(fetch_dir: Path, results: Path) -> list[str]:
    """A {"host", "unchecked"} document for each host Ansible tried that gave none."""
    recorded = []
    for result in sorted(results.glob("*")) if results.is_dir() else []:
        host = result.name
        if (fetch_dir / f"{host}.json").is_file() or (fetch_dir / f"{host}.jsonl").is_file():
            continue
        try:
            last = json.loads(read_regular_file(result, _NOTE_LIMIT))
        except (OSError, ValueError):  # not a regular file, too large, not JSON: no reason to give
            last = {}
        if not isinstance(last, dict):
            last = {}
        try:
            with open(create_private_file(fetch_dir / f"{host}.json"), "w") as out:
                out.write(json.dumps({"host": host, "unchecked": _why(last)}) + "\n")
        except FileExistsError:  # the host's own document came after all
            continue
        recorded.append(host)
    return recorded


def _why(result: dict) -> str:
    said = " ".join(str(result.get(key, "")).strip() for key in ("msg", "stderr") if result.get(key)).strip()
    kind = "unreachable" if result.get("unreachable") else "failed" if result.get("failed") else "gave no document"
    return f"{kind}: {said[:300]}" if said else kind
