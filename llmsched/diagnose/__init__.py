"""`llmsched diagnose`: from symptoms to the responsible layer.

`llmsched.evidence` turns loose evidence (files or stdin, in whatever form users paste)
into `Observation`s; this package parses no text. The diagnose engine reads
observations, metrics and manifests from a `SniffResult` and decides which scheduler is
at fault.
"""
