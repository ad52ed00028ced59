"""Plain-torch model definitions of the zoo (random weights, no downloads, no torchvision).

Each builder returns an ``nn.Module`` whose ``forward(*batch)`` returns ``(loss,)``: the loss
is part of the module so that ``aot_export_module`` sees one scalar training objective."""
