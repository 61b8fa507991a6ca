"""Core rules: pure Python, no third-party imports (DESIGN.md, decision 1)."""
