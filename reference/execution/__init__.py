"""The execution layer: where tasks run — this process, ``--jobs N`` worker processes on this machine, or a Dask
cluster (``--scheduler ADDRESS|local:N``) — with the same results in the tasks' order whichever runs them.

- :mod:`.protocol` says what a task is (run, split, died), puts a split task's parts back together, and is
  Ctrl-C's partial result;
- :mod:`.executors` chooses the executor and shows progress; :mod:`.workers` runs worker processes,
  :mod:`.clusters` a Dask cluster; :mod:`.processes` is what both start their workers with (SIGINT blocked,
  one thread each);
- :mod:`.children` — one function in a fresh interpreter leading a process group of its own, its memory capped,
  ended as a whole — with every process below it, whatever its session — at its time limit, on Ctrl-C, when its
  function returns or when its parent is gone: conform's sandbox, a bug planted by ``prove --mutants``, the docs'
  theorems, a claim decided off the main thread.

A worker that dies holding a task has it run again, then split, then FAIL with the cause; a task past its time
limit or its memory cap ends its worker (and the children it started); Ctrl-C ends every worker the run started
and returns what finished.  Nothing else in the package starts a process.
"""
