"""Writes its own replies on the grader's reply channel, claiming 'X' for every call, then exits."""

import json
import os
import sys

frame = sys._getframe()
job = None
while frame is not None and job is None:
    job = frame.f_locals.get("job") if isinstance(frame.f_locals.get("job"), dict) else None
    frame = frame.f_back
ids = (job or {}).get("calls", {}).get("ids", [])  # the job's calls, in columns (plan.wire_calls)
lines = [
    {"import": "ok"},
    {"ids": ids, "values": ["sX"] * len(ids), "details": []},
    {"done": True},
]
os.write(3, "".join(json.dumps(line) + "\n" for line in lines).encode())
os._exit(0)
