"""What makes a task admissible: the gate, perturbation checks, the leakage scan, the read
budget and the prompts built from a task."""
