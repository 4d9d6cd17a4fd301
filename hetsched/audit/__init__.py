"""Empirical audits of published bounds: claims, random and guided instance search."""
