"""TensorBoard's own writer and reader, driven by the lab's tests and bench.

Run with the peer venv's python (tests/support/peers.ts `peerPython()`):

  write SPEC.json         write event files with tensorboard's EventFileWriter; SPEC is
                          {"files": [{"dir": D, "events": [[step, wall_time, [[tag, kind, value], ...]], ...]}]}
                          kinds: simple (simple_value), tensor_f32 / tensor_f64 / tensor_f16 / tensor_i32 /
                          tensor_i64 (rank-0 tensors made by tensorboard's tensor_util, "scalars" plugin),
                          content_f32 (rank-0 DT_FLOAT in tensor_content, as TF 2's C++ writer stores it),
                          text, histogram (histogram plugin tensor), legacy_histogram (HistogramProto),
                          image (Summary.Image). Values may be the strings "nan", "inf", "-inf".
                          Prints the written file paths as a JSON list.
  read PATH...            read event files (or folders) with TensorBoard's EventAccumulator (size guidance 0 =
                          keep everything) and print {"<path>": {"<tag>": [[step, "<repr of value>"], ...]}}.
                          Values are Python reprs so NaN/inf and every double digit survive JSON.
  bench DIR SCALARS TAGS  write SCALARS simple_value scalars over TAGS tags, one Event per scalar (as PyTorch's
                          SummaryWriter.add_scalar and the HF Trainer callback do); prints the file path.

As in TensorBoard's FileWriter, a tag's plugin metadata is attached to its first value in a file only.
"""

import json
import math
import os
import struct
import sys

import numpy as np
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from tensorboard.compat.proto.histogram_pb2 import HistogramProto
from tensorboard.plugins.histogram import summary_v2 as histogram_summary
from tensorboard.plugins.scalar import metadata as scalar_metadata
from tensorboard.plugins.text import summary_v2 as text_summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter
from tensorboard.util import tensor_util


def number(v):
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    return float(v)


TENSOR_DTYPES = {
    "tensor_f32": np.float32,
    "tensor_f64": np.float64,
    "tensor_f16": np.float16,
    "tensor_i32": np.int32,
    "tensor_i64": np.int64,
}


def summary_value(tag, kind, raw, first):
    """One Summary.Value of the given kind; plugin metadata only on the tag's first value (FileWriter's rule)."""
    if kind == "simple":
        return summary_pb2.Summary.Value(tag=tag, simple_value=number(raw))
    if kind in TENSOR_DTYPES:
        v = summary_pb2.Summary.Value(tag=tag, tensor=tensor_util.make_tensor_proto(TENSOR_DTYPES[kind](number(raw))))
        if first:
            v.metadata.CopyFrom(scalar_metadata.create_summary_metadata(display_name=tag, description=""))
        return v
    if kind == "content_f32":
        t = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=tensor_shape_pb2.TensorShapeProto(),
                                   tensor_content=struct.pack("<f", number(raw)))
        v = summary_pb2.Summary.Value(tag=tag, tensor=t)
        if first:
            v.metadata.CopyFrom(scalar_metadata.create_summary_metadata(display_name=tag, description=""))
        return v
    if kind == "text":
        return text_summary.text_pb(tag, str(raw)).value[0]
    if kind == "histogram":
        return histogram_summary.histogram_pb(tag, np.array(raw, dtype=np.float64), buckets=4).value[0]
    if kind == "legacy_histogram":
        xs = [float(x) for x in raw]
        h = HistogramProto(min=min(xs), max=max(xs), num=len(xs), sum=sum(xs), sum_squares=sum(x * x for x in xs),
                           bucket_limit=[max(xs)], bucket=[len(xs)])
        return summary_pb2.Summary.Value(tag=tag, histo=h)
    if kind == "image":
        img = summary_pb2.Summary.Image(height=1, width=1, colorspace=1, encoded_image_string=bytes(raw, "utf-8"))
        return summary_pb2.Summary.Value(tag=tag, image=img)
    raise SystemExit(f"unknown kind {kind!r}")


def newest_event_file(directory):
    names = [os.path.join(directory, n) for n in os.listdir(directory) if n.startswith("events.out.tfevents.")]
    return max(names, key=os.path.getmtime)


def write(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    written = []
    for file_spec in spec["files"]:
        os.makedirs(file_spec["dir"], exist_ok=True)
        w = EventFileWriter(file_spec["dir"], max_queue_size=1000)
        seen = set()
        for step, wall_time, values in file_spec["events"]:
            summary = summary_pb2.Summary()
            for tag, kind, raw in values:
                summary.value.append(summary_value(tag, kind, raw, tag not in seen))
                seen.add(tag)
            w.add_event(event_pb2.Event(step=step, wall_time=wall_time, summary=summary))
        w.close()
        written.append(newest_event_file(file_spec["dir"]))
    print(json.dumps(written))


def read(paths):
    out = {}
    guidance = {k: 0 for k in event_accumulator.DEFAULT_SIZE_GUIDANCE}
    for p in paths:
        acc = event_accumulator.EventAccumulator(p, size_guidance=guidance)
        acc.Reload()
        tags = {}
        for tag in acc.Tags()["scalars"]:
            tags[tag] = [[e.step, repr(e.value)] for e in acc.Scalars(tag)]
        out[p] = tags
    print(json.dumps(out))


def bench(directory, scalars, ntags):
    os.makedirs(directory, exist_ok=True)
    w = EventFileWriter(directory, max_queue_size=100000, flush_secs=600)
    tags = [f"bench/metric_{i}" for i in range(ntags)]
    rng = np.random.default_rng(0)
    values = rng.standard_normal(scalars).astype(np.float32)
    step = 0
    for i in range(scalars):
        k = i % ntags
        if k == 0:
            step += 1
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tags[k], simple_value=float(values[i]))])
        w.add_event(event_pb2.Event(step=step, wall_time=1.7e9 + step, summary=summary))
    w.close()
    print(newest_event_file(directory))


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "write" and len(sys.argv) == 3:
        write(sys.argv[2])
    elif cmd == "read" and len(sys.argv) >= 3:
        read(sys.argv[2:])
    elif cmd == "bench" and len(sys.argv) == 5:
        bench(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        raise SystemExit(__doc__)
