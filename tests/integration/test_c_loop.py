"""The C loop engine (jvmbridge/native/aesloop.c): its bytes against pyca's for every mode, key
size, direction and shape; its place in a comparison; and the one-line reason when it cannot build."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from helpers import run_cli

from jvmbridge.native.c_loop import library_path
from jvmbridge.reference import encrypt_message, stream_output
from jvmbridge.sampling.workload import KEY_BITS, TRANSFORMATIONS, Operation

# In a child: the C loop links the system's libcrypto, pyca its own; one process each keeps them apart.
_RUN = """
import ctypes, json, sys
from pathlib import Path
from jvmbridge.native.c_loop import load
lib = load(Path(sys.argv[1]))
found = {}
for case in json.loads(sys.stdin.read()):
    data, key, iv = (bytes.fromhex(case[k]) for k in ("input", "key", "iv"))
    out, length = ctypes.create_string_buffer(len(data) + 32), ctypes.c_int(0)
    ns = lib.aesloop_run(case["cipher"].encode(), case["stream"], case["decrypt"], key, iv, len(iv), data, len(data),
                         1, out, ctypes.byref(length))
    found[case["name"]] = out.raw[:length.value].hex() if ns >= 0 else None
print(json.dumps(found))
"""


def test_the_c_loop_computes_pycas_bytes_in_every_mode_size_direction_and_shape():
    cases, expected = [], {}
    for bits in KEY_BITS:
        for mode in TRANSFORMATIONS:
            for size in (0, 15, 16, 38, 1024):
                for shape in ("message", "stream"):
                    for decrypt in (False, True):
                        op = Operation(bits, mode, "decrypt" if decrypt else "encrypt", size, shape)
                        data = encrypt_message(op.key, op.iv, op.plaintext, mode) if decrypt else op.plaintext
                        if decrypt and mode == "gcm" and shape == "stream":
                            data = data[:-16]  # a stream never reaches its tag
                        name = f"{op.cipher_name} {op.direction} {size} B {shape}"
                        cases.append({"name": name, "cipher": op.cipher_name, "stream": shape == "stream",
                                      "decrypt": decrypt, "key": op.key.hex(), "iv": op.iv.hex(), "input": data.hex()})
                        if shape == "stream":
                            expected[name] = stream_output(op.key, op.iv, data, 1, mode, decrypt).hex()
                        else:
                            expected[name] = (op.plaintext if decrypt
                                              else encrypt_message(op.key, op.iv, op.plaintext, mode)).hex()
    done = subprocess.run([sys.executable, "-c", _RUN, str(library_path())], input=json.dumps(cases),
                          capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    assert len(found) == len(cases) == 3 * 4 * 5 * 2 * 2
    assert {name: value for name, value in found.items() if value != expected[name]} == {}


def test_without_a_compiler_the_engine_is_left_out_with_its_reason(tmp_path):
    env = {**os.environ, "CC": str(tmp_path / "no-such-cc"), "XDG_CACHE_HOME": str(tmp_path)}
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--engine", "pyca", "--sizes", "16", "--round-time", "0.05",
                   "--rounds", "2", "--max-forks", "2", "--quiet", "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    assert f"jvmbridge: engine c-loop left out: no C compiler ({tmp_path / 'no-such-cc'})" in done.stderr
    assert {row["engine"] for row in json.loads(done.stdout)["results"]} == {"OpenSSL via pyca (Python loop)"}

