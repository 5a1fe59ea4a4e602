"""Measures read from a prepared frame: scoring rules, signal detection, judgments, error rates, rates by a
design's factors, model-side measures (demand gap, consistency), task measures and their report sections."""
