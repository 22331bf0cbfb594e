"""Run the fleet playbook with Ansible's own `ansible-playbook`, then record every host that gave
no document (unreachable, or its check failed) with Ansible's reason."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from jvmbridge.trust.bounded import read_regular_file
from jvmbridge.trust.launch import environment, find_program, run
from jvmbridge.trust.paths import NotTrusted
from jvmbridge.trust.writer import create_private_file

PLAYBOOK = Path(__file__).resolve().with_name("playbook.yml")
# Ansible reads the first of $ANSIBLE_CONFIG, ./ansible.cfg, ~/.ansible.cfg, /etc/ansible/ansible.cfg:
# the play names its own, so none of the caller's folder or home configures (or loads plugins into) it.
SETTINGS = PLAYBOOK.with_name("ansible.cfg")
# Where the play's callback (callback_plugins/, beside it) leaves why a host gave no document.
RESULTS = ".ansible-results"
# A note is Ansible's message and stderr for one host; past this it is not read (the host is "failed").
_NOTE_LIMIT = 1 << 20


class FleetError(RuntimeError):
    """Ansible is missing, or could not run the play at all."""


def run_playbook(inventory: str, ansible_args: tuple[str, ...], fetch_dir: Path, wheel: Path | None = None,
                 compare: bool = False) -> int:
    """``ansible-playbook`` on the fleet play; its output goes to stderr as it comes (stdout is the
    report's). Returns its exit code; the documents (and records of hosts not checked) are then in
    ``fetch_dir``, a folder trust.paths.private_folder made."""
    try:
        playbook = find_program("ansible-playbook", "ansible-playbook")
    except NotTrusted as e:
        raise FleetError(str(e)) from None
    if not playbook:
        raise FleetError("ansible-playbook not found: install Ansible (pip install ansible-core)")
    results = fetch_dir / RESULTS
    shutil.rmtree(results, ignore_errors=True)
    # In the launcher's working folder, not the caller's: paths the play is given are whole.
    env = environment({"JVMBRIDGE_FLEET_RESULTS": str(results.resolve()), "ANSIBLE_CONFIG": str(SETTINGS)},
                      inherit=("SSH_AUTH_SOCK",))  # the user's SSH agent, for the keys that reach the hosts
    whole = inventory if "," in inventory else str(Path(inventory).resolve())  # "host1,host2," names hosts
    command = [str(playbook), "-i", whole, str(PLAYBOOK), "-e", f"jvmbridge_fetch_dir={fetch_dir.resolve()}",
               *(["-e", f"jvmbridge_wheel={wheel.resolve()}"] if wheel else []),
               *(["-e", "jvmbridge_run=compare"] if compare else []), *ansible_args]
    status = run(command, env=env, stdout=sys.stderr).returncode
    record_unchecked(fetch_dir, results)
    return status


def record_unchecked(fetch_dir: Path, results: Path) -> list[str]:
    """A {"host", "unchecked"} document for each host Ansible reached (or tried to) that gave none."""
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
