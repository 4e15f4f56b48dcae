"""`autograde grade --shard K/N`: a stable slice of the class, for grading it on N machines at once.

A student belongs to shard (hash of their name mod N) + 1: the slice depends on the name alone, not on its
position in the class, so adding or removing a student never moves anyone else to another shard, and the same
K/N of the same class is always the same students. `autograde merge` puts the N outputs back together.
"""

import hashlib
import re

MAX_SHARDS = 1000
SHARD = re.compile(r"(\d{1,4})/(\d{1,4})")


def parse_shard(text: str) -> tuple[tuple[int, int] | None, str | None]:
    """(K, N) of --shard K/N, or why the text is not one."""
    match = SHARD.fullmatch(text.strip())
    if not match:
        return None, f"--shard must be K/N (this machine's slice K of N, e.g. 2/5), not {text!r}"
    k, n = int(match[1]), int(match[2])
    if not 1 <= n <= MAX_SHARDS:
        return None, f"--shard {text}: N must be 1 to {MAX_SHARDS}"
    if not 1 <= k <= n:
        return None, f"--shard {text}: K must be 1 to {n}"
    return (k, n), None


def shard_of(student: str, n: int) -> int:
    """The shard (1 to n) a student's name falls in."""
    digest = hashlib.sha256(student.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % n + 1


def select(students: list[tuple[str, object]], notes: list[str], shard: tuple[int, int] | None):
    """The students of shard K/N (all of them when shard is None), and a note saying how many that is."""
    if shard is None:
        return students, notes
    k, n = shard
    chosen = [(name, path) for name, path in students if shard_of(name, n) == k]
    return chosen, [*notes, f"shard {k}/{n}: {len(chosen)} of the class's {len(students)} students"]
