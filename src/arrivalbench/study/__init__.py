"""Grading at scale: arms, the grid of cells, executors, the results store and regrading."""
