#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""An MPI ping-pong with data checks: rank 0 sends a message of each size,
rank 1 checks every byte and answers with a message of its own, which rank
0 checks too. Each message's bytes depend on the size, the round and the
direction, so a stale, short or misplaced message fails. Prints the
half round-trip time of small messages and the bandwidth of large ones.
"""
import hashlib
import sys
import time

from mpi4py import MPI

SIZES = [1, 64, 4095, 4096, 65537, 1 << 20]
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20


def pattern(size, rnd, way):
    return hashlib.shake_128(f"{size}.{rnd}.{way}".encode()).digest(size)


def main():
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    if comm.Get_size() != 2:
        print("mpi_pingpong: needs exactly 2 ranks", file=sys.stderr)
        return 2
    peer = 1 - rank
    bad = 0
    for size in SIZES:
        buf = bytearray(size)
        want = [pattern(size, r, peer) for r in range(ROUNDS)]
        mine = [pattern(size, r, rank) for r in range(ROUNDS)]
        comm.Barrier()
        t0 = time.monotonic()
        for r in range(ROUNDS):
            if rank == 0:
                comm.Send([mine[r], MPI.BYTE], dest=peer, tag=r)
            st = MPI.Status()
            comm.Recv([buf, MPI.BYTE], source=peer, tag=r, status=st)
            if st.Get_count(MPI.BYTE) != size or bytes(buf) != want[r]:
                bad += 1
                print(f"rank {rank}: size {size} round {r}: "
                      f"{st.Get_count(MPI.BYTE)} bytes, data "
                      f"{'right' if bytes(buf) == want[r] else 'wrong'}")
            if rank == 1:
                comm.Send([mine[r], MPI.BYTE], dest=peer, tag=r)
        dt = time.monotonic() - t0
        if rank == 0:
            print(f"size {size}: {dt / ROUNDS / 2 * 1e6:.1f} us one way, "
                  f"{2 * size * ROUNDS / dt / 1e6:.2f} MB/s")
    bad = comm.allreduce(bad)
    if rank == 0:
        print(f"{len(SIZES) * ROUNDS * 2} messages, {bad} wrong, on "
              f"{MPI.Get_library_version().splitlines()[0]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
