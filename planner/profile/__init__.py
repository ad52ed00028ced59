"""Capture of real models: fake-tensor capture (capture.py, translate.py, optim.py), cost
model (costmodel.py, devices.py, measure.py), model zoo (zoo.py, build.py, models/).

Importing this package does not import torch; ``zoo`` and ``devices`` are torch-free."""
