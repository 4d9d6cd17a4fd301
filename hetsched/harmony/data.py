"""Default parameters of the interference-aware placement model (Harmony, ToN'22): the six
models of Table I, the testbed server of Sec. VII.B, per-task resource demands, and the
interference and communication coefficients of the speed model in
:mod:`hetsched.harmony.problem`.

Sources and assumptions (the paper publishes its measurements only as pictures):

* Models and servers: Table I; Sec. VII.B (a server has 2 GTX 1080Ti GPUs, 8 CPU cores, a
  50 GbE NIC). Bandwidth is counted in Gbit/s.
* ``INTERFERENCE[a][b]``: the fraction of model a's standalone speed lost when a job of model b
  shares a server with it. **Assumed**, set to follow what Sec. III says of Figs. 1, 2 and 5:
  bin packing costs 33% on average and ResNeXt nearly 2x; "all jobs are severely affected by
  the CPU-intensive CTC job"; ResNeXt with WLM and ResNeXt with Seq2Seq "are less affected";
  ResNeXt is more sensitive to CPU-intensive neighbours than VGG-16.
* ``COMMUNICATION[a]``: the fraction of standalone speed lost per extra server a job of model
  a spans. **Assumed**, large for VGG-16 ("a large amount of gradient exchanges ... sensitive to
  network latency and throughput", Case study 3) and small for compute-bound models.
* Demands: a worker takes 1 GPU, a parameter server none (Sec. V.A's example); CPU cores and
  bandwidth per task are assumed (CTC is CPU intensive, VGG-16 bandwidth intensive).
"""

from __future__ import annotations

MODELS = ("resnet50", "vgg16", "resnext110", "seq2seq", "ctc", "wlm")

SERVER = {"gpu": 2.0, "cpu": 8.0, "bandwidth": 50.0}

# slowdown of the row model caused by one co-located job of the column model
INTERFERENCE: dict[str, dict[str, float]] = {
    "resnet50": {
        "resnet50": 0.12,
        "vgg16": 0.15,
        "resnext110": 0.10,
        "seq2seq": 0.08,
        "ctc": 0.30,
        "wlm": 0.08,
    },
    "vgg16": {
        "resnet50": 0.12,
        "vgg16": 0.20,
        "resnext110": 0.10,
        "seq2seq": 0.10,
        "ctc": 0.22,
        "wlm": 0.10,
    },
    "resnext110": {
        "resnet50": 0.15,
        "vgg16": 0.15,
        "resnext110": 0.20,
        "seq2seq": 0.04,
        "ctc": 0.45,
        "wlm": 0.03,
    },
    "seq2seq": {
        "resnet50": 0.08,
        "vgg16": 0.10,
        "resnext110": 0.05,
        "seq2seq": 0.12,
        "ctc": 0.28,
        "wlm": 0.10,
    },
    "ctc": {
        "resnet50": 0.15,
        "vgg16": 0.12,
        "resnext110": 0.12,
        "seq2seq": 0.12,
        "ctc": 0.35,
        "wlm": 0.10,
    },
    "wlm": {
        "resnet50": 0.08,
        "vgg16": 0.10,
        "resnext110": 0.04,
        "seq2seq": 0.10,
        "ctc": 0.30,
        "wlm": 0.10,
    },
}

# lost fraction of standalone speed per extra server the job spans
COMMUNICATION: dict[str, float] = {
    "resnet50": 0.12,
    "vgg16": 0.30,
    "resnext110": 0.04,
    "seq2seq": 0.10,
    "ctc": 0.05,
    "wlm": 0.08,
}

# per-task demands (gpu, cpu cores, Gbit/s)
WORKER: dict[str, dict[str, float]] = {
    "resnet50": {"gpu": 1, "cpu": 2, "bandwidth": 5},
    "vgg16": {"gpu": 1, "cpu": 2, "bandwidth": 10},
    "resnext110": {"gpu": 1, "cpu": 2, "bandwidth": 2},
    "seq2seq": {"gpu": 1, "cpu": 2, "bandwidth": 5},
    "ctc": {"gpu": 1, "cpu": 4, "bandwidth": 2},
    "wlm": {"gpu": 1, "cpu": 1, "bandwidth": 3},
}
PARAMETER_SERVER: dict[str, dict[str, float]] = {
    "resnet50": {"gpu": 0, "cpu": 1, "bandwidth": 10},
    "vgg16": {"gpu": 0, "cpu": 1, "bandwidth": 20},
    "resnext110": {"gpu": 0, "cpu": 1, "bandwidth": 4},
    "seq2seq": {"gpu": 0, "cpu": 1, "bandwidth": 10},
    "ctc": {"gpu": 0, "cpu": 2, "bandwidth": 4},
    "wlm": {"gpu": 0, "cpu": 1, "bandwidth": 6},
}

# standalone training speed, epochs per 20-minute interval (Sec. VII.B's interval), assumed
STANDALONE_SPEED: dict[str, float] = {
    "resnet50": 1.0,
    "vgg16": 0.8,
    "resnext110": 2.0,
    "seq2seq": 1.5,
    "ctc": 3.0,
    "wlm": 4.0,
}


def standalone_speed(given: float | None, model: str | None) -> float | None:
    """b_n: the given standalone speed, else the model's default (None: neither)."""
    return given if given is not None else STANDALONE_SPEED.get(model or "")


INTERVAL_SECONDS = 1200.0  # Harmony's scheduling interval (Sec. VII.B): speeds are per interval
MIN_SPEED_FRACTION = 0.1  # a job never runs slower than this fraction of its standalone speed
