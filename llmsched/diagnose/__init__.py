"""`llmsched diagnose`: from symptoms to the responsible layer.

`sniff` turns loose evidence (files or stdin, in whatever form users paste) into
`evidence.Observation`s; `signatures` is the catalogue of error messages each layer
emits. The diagnose engine reads observations, metrics and manifests from a
`evidence.SniffResult` and decides which scheduler is at fault.
"""
