"""FAISS over the rows `npm run bench:matcher` scans, timed in the same run as ours.

Two indexes, the peers of our two search modes:
  sq8     IndexScalarQuantizer(QT_8bit_direct_signed, inner product): an exact int8 scan
          (each byte is the int8 value itself; the query is the probe as float32).
  binary  IndexBinaryFlat over the rows' sign bits (bit j % 8 of byte j / 8 set when component
          j is negative, as src/sign-bits.ts packs them): the 1-bit scan that a
          two-stage search's first stage must outrun.

Input: a little-endian int8 file of rows and one of 16 probes, both `dimension` wide.
Output (stdout, one JSON document): the FAISS version, per index/batch/threads the median and
p95 of `index.search` in ms, and each probe's top-1 row for both indexes.
"""
import argparse
import json
import sys
import time

import faiss
import numpy as np

BATCHES = (1, 16)
ADD_CHUNK = 262_144  # rows per add(): keeps the float32 copy small


def sign_bits(vectors: np.ndarray) -> np.ndarray:
    return np.packbits(vectors < 0, axis=1, bitorder="little")


def build_sq8(rows: np.ndarray, dimension: int):
    index = faiss.IndexScalarQuantizer(dimension, faiss.ScalarQuantizer.QT_8bit_direct_signed, faiss.METRIC_INNER_PRODUCT)
    for start in range(0, len(rows), ADD_CHUNK):
        index.add(rows[start:start + ADD_CHUNK].astype(np.float32))
    return index


def build_binary(rows: np.ndarray, dimension: int):
    index = faiss.IndexBinaryFlat(dimension)
    for start in range(0, len(rows), ADD_CHUNK):
        index.add(sign_bits(rows[start:start + ADD_CHUNK]))
    return index


def timed(search, budget_ms: float, max_iterations: int):
    """One warm-up, then as many runs as fit in the budget (3..max_iterations), like bench/matcher-timing.ts."""
    started = time.perf_counter()
    search()
    first = (time.perf_counter() - started) * 1000
    iterations = max(3, min(max_iterations, int(budget_ms / max(first, 0.01))))
    samples = []
    for _ in range(iterations):
        started = time.perf_counter()
        search()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()

    def percentile(fraction):
        return samples[min(len(samples) - 1, round(fraction * (len(samples) - 1)))]

    return {"medianMs": percentile(0.5), "p95Ms": percentile(0.95), "samples": len(samples)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", required=True)
    parser.add_argument("--probes", required=True)
    parser.add_argument("--dimension", type=int, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--budget-ms", type=float, default=1000)
    parser.add_argument("--max-iterations", type=int, default=25)
    args = parser.parse_args()

    dimension = args.dimension
    rows = np.fromfile(args.rows, dtype=np.int8).reshape(-1, dimension)
    probes = np.fromfile(args.probes, dtype=np.int8).reshape(-1, dimension)
    float_probes = probes.astype(np.float32)
    probe_bits = sign_bits(probes)

    started = time.perf_counter()
    indexes = {"sq8": (build_sq8(rows, dimension), float_probes), "binary": (build_binary(rows, dimension), probe_bits)}
    build_seconds = time.perf_counter() - started

    timings = []
    for name, (index, queries) in indexes.items():
        for threads in sorted({int(value) for value in args.threads.split(",")}):
            faiss.omp_set_num_threads(threads)
            for batch in BATCHES:
                batch_queries = queries[:batch]
                measured = timed(lambda: index.search(batch_queries, args.k), args.budget_ms, args.max_iterations)
                timings.append({"index": name, "batch": batch, "threads": threads, **measured})

    top1 = {}
    for name, (index, queries) in indexes.items():
        _, labels = index.search(queries, 1)
        top1[name] = [int(label) for label in labels[:, 0]]

    json.dump({"version": faiss.__version__, "rows": len(rows), "buildSeconds": build_seconds, "timings": timings, "top1": top1}, sys.stdout)


if __name__ == "__main__":
    main()
