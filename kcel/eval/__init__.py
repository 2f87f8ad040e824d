"""Stage 3: checked (or parsed) expressions -> generated Python functions, and their evaluation."""
