"""The garbage collector's probe for the bench's servers (not part of the program: put this directory on
``PYTHONPATH`` and Python imports it at start, in the bench and in every process it starts).

``XQ_GCLOG=PATH``: each server process (``python -c``) writes ``PATH.<pid>``: one line per
collection of generation 1 or 2, and of generation 0 when it took over 2 ms of wall time:
``<unix time> gen<g> wall <ms> cpu <ms> collected <n> scanned <n>`` — ``cpu`` is the collecting
thread's CPU time (:func:`time.thread_time`: less inflated than the wall time by the other jobs of a
busy machine), ``scanned`` the objects in the generations collected (counted before the timing
starts); and a line ``frozen <n>`` each time the frozen count changes by more than 1,000 in the
first two minutes. ``XQ_GCDUMP=PATH``: on the signal ``SIGRTMIN+3`` (``kill -s RTMIN+3 <pid>``) a
server writes ``PATH.<pid>.<n>``: the objects the collector tracks now, counted by type (module and
name), most first. ``XQ_GCTH=a,b,c``: these thresholds instead of whatever the program sets (to
compare policies without changing the code). Summary: ``bench/gc_summary.py PATH.<pid>``.
"""

import collections
import gc
import os
import signal
import sys
import threading
import time

_log = os.environ.get("XQ_GCLOG")
if os.environ.get("XQ_GCTH"):
    _th = tuple(int(x) for x in os.environ["XQ_GCTH"].split(","))
    _set = gc.set_threshold
    _set(*_th)
    gc.set_threshold = lambda *_a: _set(*_th)
if _log and sys.argv[:1] == ["-c"]:
    _out = open(f"{_log}.{os.getpid()}", "w", buffering=1)  # noqa: SIM115 - open for the process's life
    _t = [0.0, 0.0, 0]
    _pc, _tt = time.perf_counter, time.thread_time

    def _size(phase, info):
        if phase == "start" and info["generation"] >= 1:
            _t[2] = sum(len(gc.get_objects(k)) for k in range(info["generation"] + 1))

    def _time(phase, info):
        if phase == "start":
            _t[0], _t[1] = _pc(), _tt()
            return
        wall, cpu = (_pc() - _t[0]) * 1000, (_tt() - _t[1]) * 1000
        g = info["generation"]
        if g >= 1 or wall > 2:
            _out.write(f"{time.time():.3f} gen{g} wall {wall:.2f} cpu {cpu:.2f} collected "
                       f"{info['collected']} scanned {_t[2] if g else -1}\n")

    gc.callbacks.extend([_size, _time])

    def _frozen():
        last = 0
        for _ in range(600):
            time.sleep(0.2)
            n = gc.get_freeze_count()
            if abs(n - last) > 1000:
                _out.write(f"{time.time():.3f} frozen {n} thresholds {gc.get_threshold()}\n")
                last = n

    threading.Thread(target=_frozen, daemon=True).start()

_dump = os.environ.get("XQ_GCDUMP")
if _dump and sys.argv[:1] == ["-c"]:
    _dumps = [0]

    def _count(*_args):
        _dumps[0] += 1
        objs = gc.get_objects()
        by_type = collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in objs)
        with open(f"{_dump}.{os.getpid()}.{_dumps[0]}", "w", encoding="utf-8") as f:
            f.write(f"total {len(objs)} frozen {gc.get_freeze_count()} stats {gc.get_stats()}\n")
            for name, n in by_type.most_common(200):
                f.write(f"{n:9d} {name}\n")

    signal.signal(signal.SIGRTMIN + 3, _count)
