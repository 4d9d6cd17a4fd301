"""Hadar (2024): heterogeneity-aware online scheduling with gang-scheduled jobs over time slots."""
