"""What a user would pick instead of a planner: PyTorch's own budgeted partitioner (needs torch,
so it lives here and not in ``formulations``, which never imports torch)."""
from planner.registry import register

register("pytorch-budget", "planner.baselines.pytorch_budget:solve_pytorch_budget", "baseline",
         "PyTorch's min-cut partitioner, activation_memory_budget tuned over 0..1 (zoo aot graphs); placed, validated",
         prepare="planner.baselines.pytorch_budget:prepare")
