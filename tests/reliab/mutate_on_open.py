#!/usr/bin/env python3
"""mutate_on_open.py — change a file while a process group is reading it.

    mutate_on_open.py FILE MODE PGID [TIMEOUT_S]

Polls /proc until a process of group PGID has FILE open, then, at once:
  truncate   cut the file to a third of its size
  unlink     remove it (the reader keeps its open file)
  garble     overwrite its middle third with bytes that are not JSON
  grow       append garbage after the end
and prints "<mode> at read offset <pos> of <size>" (pos from fdinfo), or
"never opened" when the timeout passes first.
"""
import os
import sys
import time


def find(path, pgid):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.getpgid(int(pid)) != pgid:
                continue
            fds = "/proc/%s/fd" % pid
            for fd in os.listdir(fds):
                try:
                    if os.readlink(os.path.join(fds, fd)) == path:
                        return pid, fd
                except OSError:
                    pass
        except OSError:
            pass
    return None


def main():
    path, mode, pgid = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    limit = time.time() + float(sys.argv[4] if len(sys.argv) > 4 else 60)
    size = os.path.getsize(path)
    while time.time() < limit:
        hit = find(path, pgid)
        if hit:
            break
        time.sleep(0.002)
    else:
        print("never opened")
        return
    if mode == "truncate":
        os.truncate(path, size // 3)
    elif mode == "unlink":
        os.unlink(path)
    elif mode == "garble":
        with open(path, "r+b") as f:
            f.seek(size // 3)
            f.write(b"\x00}]{garbage" * (size // 33))
    elif mode == "grow":
        with open(path, "ab") as f:
            f.write(b"]]]}}}garbage" * 1000)
    pos = "?"
    try:
        with open("/proc/%s/fdinfo/%s" % hit) as f:
            pos = f.readline().split()[1]
    except OSError:
        pass
    print("%s at read offset %s of %d" % (mode, pos, size))


if __name__ == "__main__":
    main()
