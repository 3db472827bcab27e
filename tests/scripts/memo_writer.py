"""Write numbered entries into a memo store from a process of its own (for test_memo_store).

After each put it reads the entry back and prints ``TIME INDEX STORED`` (STORED is 1
if this process's put was the one that stored it), so the test knows what was
committed when it kills or joins the process. With ``--start-when FILE`` it opens
the store, prints ``ready`` and waits for FILE, so that several writers start together.
"""

import argparse
import time
from pathlib import Path

from wormhole_ns3.memo.store import MemoStore


def value_of(writer: str, index: int, size: int) -> bytes:
    pattern = f"{writer}:{index}:".encode()
    return (pattern * (size // len(pattern) + 1))[:size]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("writer")
    parser.add_argument("first", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--map-size", type=int, default=1 << 20)
    parser.add_argument("--start-when", type=Path)
    args = parser.parse_args()
    with MemoStore.open(args.store, map_size=args.map_size) as store:
        if args.start_when:
            print("ready", flush=True)
            while not args.start_when.exists():
                time.sleep(0.001)
        for index in range(args.first, args.first + args.count):
            key = f"key-{index:06d}".encode()
            stored = store.put(key, value_of(args.writer, index, args.value_size), {"writer": args.writer})
            assert store.get(key) is not None
            print(f"{time.time():.6f} {index} {int(stored)}", flush=True)


if __name__ == "__main__":
    main()
