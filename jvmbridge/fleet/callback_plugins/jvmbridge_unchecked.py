"""An Ansible callback beside the fleet playbook: each unreachable or failed host's last result as
JSON in $JVMBRIDGE_FLEET_RESULTS/<host>, so `jvmbridge fleet` can say why it has no document."""
from __future__ import annotations

import json
import os
from pathlib import Path

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "jvmbridge_unchecked"

    def _record(self, result, kind: str) -> None:
        folder = os.environ.get("JVMBRIDGE_FLEET_RESULTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            said = {key: result._result.get(key) for key in ("msg", "stderr") if result._result.get(key)}
            (Path(folder) / result._host.get_name()).write_text(json.dumps({kind: True, **said}, default=str))

    def v2_runner_on_unreachable(self, result):
        self._record(result, "unreachable")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if not ignore_errors:
            self._record(result, "failed")
