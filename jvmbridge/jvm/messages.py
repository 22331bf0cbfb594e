"""Reading what a JVM printed: why it refused to start or died, and the warnings it gave."""
from __future__ import annotations

import re

# What a JVM prints when it refuses its options (JPype only says "Unable to start JVM") or when it
# dies: the reason, and where its hs_err report went.
_COMPLAINT = re.compile(r"^(Error:|Unrecognized VM option|Improperly specified VM option|.*must be enabled via"
                        r"|Aborting due to|#\s+fatal error:|# /\S*hs_err\S*)")
# Said after every refusal; worth showing only when nothing more specific was said.
_GENERIC = ("Error: Could not create the Java Virtual Machine.", "Error: A fatal exception has occurred. Program will exit.")
_WARNING = re.compile(r"^\s*(OpenJDK .*VM )?[Ww]arning:")


def complaint(output: str) -> str:
    """The JVM's own explanation on one line, or "" when it gave none."""
    lines = [line.strip() for line in output.splitlines() if _COMPLAINT.match(line.strip())]
    lines = [line for line in lines if line not in _GENERIC] or lines
    return " ".join(dict.fromkeys(re.sub(r"^#\s+(/\S*hs_err)", r"report: \1", line) for line in lines))


def warnings(output: str) -> list[str]:
    """Warnings the JVM printed, e.g. "AES intrinsics require UseAES flag to be enabled"."""
    return list(dict.fromkeys(line.strip() for line in output.splitlines() if _WARNING.match(line)))
