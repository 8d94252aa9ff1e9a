"""What decides a verdict: the task format, the log, schedules and plans, the engines, artifacts,
the replay, the every-batch check, the oracle, grading and the verdict record. The harness
version (`version.py`) is a digest of exactly this package."""
