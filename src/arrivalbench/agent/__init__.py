"""Model arms: prompts, the leakage scan and (with the `agent` extra) the Inspect AI task."""
