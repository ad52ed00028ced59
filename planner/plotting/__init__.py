"""Pictures of plans and studies. matplotlib is optional (the ``plot`` extra) and imported
only when a picture is drawn; the memory-viz export needs neither matplotlib nor torch.

- ``timeline``: replay a plan into storage rectangles (lifetime x address range) and live bytes.
- ``plan_plot``: the address-time map and live memory over time, as PNG.
- ``memviz``: a PyTorch memory snapshot (pickle) that PyTorch's memory_viz page opens.
"""
