"""ArrivalBench: grade incremental data pipelines by running them again under time."""

# Read by the build (pyproject.toml) and stamped on every verdict. A literal, because asking
# importlib.metadata costs a tenth of a second in every process, workers included.
__version__ = "0.3.0"
