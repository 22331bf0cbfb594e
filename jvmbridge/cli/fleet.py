"""`jvmbridge fleet`: `check` on every host of an Ansible inventory, then one fleet report."""
from __future__ import annotations

import datetime
import sys
from pathlib import Path

import click

from jvmbridge.cli.common import (
    DOCUMENT_AS_JSON,
    export_options,
    format_option,
    output_option,
    print_document,
    quiet_option,
    read_fleet,
    terminal_width,
)
from jvmbridge.cli.say import say, say_lines


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("inventory", required=False)
@click.argument("ansible_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Where each host's document is saved [default: ~/.local/share/jvmbridge/fleet/<start>/].")
@click.option("--wheel", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="A jvmbridge wheel to install (into ~/.jvmbridge-venv) on hosts that lack jvmbridge.")
@click.option("--compare", "run_compare", is_flag=True,
              help="Run `jvmbridge compare` instead (its options: -e jvmbridge_compare_args='...'), and report the "
                   "runs side by side, one column per host.")
@format_option("fleet")
@export_options("fleet")
@output_option(DOCUMENT_AS_JSON + " (Each host's own document goes to --out.)")
@quiet_option
@click.option("--print-playbook", is_flag=True, help="Print the playbook's path and exit (to run it yourself).")
def fleet(inventory, ansible_args, out_dir, wheel, run_compare, output_format, exports, output, quiet, print_playbook):
    """Run `jvmbridge check` on every host of INVENTORY through ansible-playbook (any further
    arguments go to it: -f 50, --limit web, -u deploy, ...), fetch each document, and report.

    Exit code as `check`'s over the fleet: 0 all active, 1 something not active or wrong, 2 a host
    could not be checked (or could not tell). With --compare: 2 if a host gave no run.
    """
    from jvmbridge.fleet.run import PLAYBOOK, FleetError, run_playbook
    from jvmbridge.saved.store import data_dir
    from jvmbridge.trust.paths import NotTrusted, private_folder

    if print_playbook:
        click.echo(PLAYBOOK)
        return
    _check_inventory(inventory)
    started = datetime.datetime.now(datetime.timezone.utc)
    try:
        fetch_dir = private_folder(Path(out_dir) if out_dir else data_dir() / "fleet" / f"{started:%Y%m%dT%H%M%SZ}",
                                   "the fleet folder")  # root writes the hosts' documents there
        # Ansible's output on stderr as it comes, escaped: it quotes what the hosts said.
        run_playbook(inventory, ansible_args, fetch_dir, say_lines, Path(wheel) if wheel else None, run_compare)
    except (FleetError, NotTrusted) as e:
        raise click.ClickException(str(e)) from None
    if run_compare:
        _compare_report(fetch_dir, output_format, output, quiet, exports)
    documents = sorted(fetch_dir.glob("*.json"))
    if not documents:
        raise click.ClickException(f"no host gave a document (see Ansible's output above); nothing in {fetch_dir}")
    result = read_fleet(documents)
    saved = print_document("fleet", output_format, result, output, quiet, exports, terminal_width())
    if not quiet:
        say(f"documents saved in {fetch_dir} (`jvmbridge report {fetch_dir}` shows them again)")
    sys.exit(result.exit_code if saved else max(result.exit_code, 2))  # 2: could not do all it was asked


def _check_inventory(inventory: str | None) -> None:
    """A usage error where no inventory is given, or it is neither hosts by name nor a file or folder."""
    if not inventory:
        raise click.UsageError("give an Ansible inventory (a file, a folder, or 'host1,host2,')")
    if "," not in inventory and not Path(inventory).exists():
        raise click.UsageError(f"{inventory}: no such inventory file or folder (hosts by name: 'host1,host2,')")


def _compare_report(fetch_dir: Path, output_format: str, output: Path | None, quiet: bool,
                    exports: list[tuple[str, Path]]) -> None:
    """The hosts' runs side by side (a column per host, named by its file); each host without a run,
    or whose run file cannot be read, said once: one host's file never refuses the others'."""
    from jvmbridge.cli.report import runs_report

    runs, missing = readable_runs(sorted(fetch_dir.glob("*.jsonl")))
    missing.update(read_fleet(sorted(fetch_dir.glob("*.json"))).unchecked)
    saved = runs_report([str(run) for run in runs], output_format, "host", None, output, quiet, exports,
                        hosts_from_files=True) if runs else True
    for host, why in sorted(missing.items()):
        say(f"{host}: no run ({why})")
    if not quiet:
        say(f"runs saved in {fetch_dir} (`jvmbridge report --columns host {fetch_dir}/*.jsonl`)")
    sys.exit(2 if missing or not runs or not saved else 0)


def readable_runs(runs: list[Path]) -> tuple[list[Path], dict[str, str]]:
    """The hosts' run files that can be read, and host (as its file names it) -> why for those that
    cannot: each file is read alone first, as one bad file would refuse the whole report."""
    from jvmbridge.saved.store import ResultFileError, read

    readable, unreadable = [], {}
    for run in runs:
        try:
            read([run])
        except ResultFileError as e:
            unreadable[run.stem] = str(e)
        else:
            readable.append(run)
    return readable, unreadable
