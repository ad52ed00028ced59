import os

# Keep solver and torch threads in check on the 2-core CI machine.
os.environ.setdefault("OMP_NUM_THREADS", "1")
